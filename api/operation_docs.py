"""Each API operation's summary and description in the OpenAPI schema, written for the people who call it.

One table keyed by operation id, applied by a schema hook, so the words a user reads in Swagger UI and in a
generated client are kept together and a test can hold every operation to having them (the views' own
docstrings are notes for this code's maintainers).
"""

OPERATIONS: dict[str, tuple[str, str]] = {
    # Spaces
    "spaces_list": (
        "List spaces",
        "The spaces of your tenant, oldest first: one per customer (`end_user`) and the `shared` spaces of "
        "agents' past cases. Paginated with `limit` and `offset`.",
    ),
    "spaces_create": (
        "Create a space",
        "A space for one customer (`kind: end_user`, the default) or for agents' shared cases (`shared`), named "
        "by your own `external_id`. 409 when the id is taken in your tenant. Needs the `admin` scope.",
    ),
    "spaces_retrieve": (
        "Get a space",
        "A space with its own setting overrides (`settings`) and the settings in force (`effective_settings`: "
        "built-in defaults, then your tenant's, then the space's).",
    ),
    "spaces_partial_update": (
        "Change a space's name or settings",
        "Settings are merged into the space's overrides; a setting set to `null` goes back to the tenant's "
        "default. Needs the `admin` scope.",
    ),
    "spaces_destroy": (
        "Erase a space",
        "Deletes every row of the space and its encryption key, permanently, and audits it. The "
        "`Engram-Erasure-Residue` header names the key version whose retirement ends what copies in backups "
        "still hold. Needs the `admin` scope.",
    ),
    # The turn loop
    "spaces_turns_create": (
        "Take a customer's turn",
        "Call at the start of each customer turn with their message. Stores it, answers with what is worth "
        "knowing now (`memories` and a ready `prompt` block) and, when the customer asked to forget something, "
        "deletes it and gives a `confirmation` to say back. What the message teaches is learnt in the "
        "background; `?wait=true` learns it before answering and lists what was `created`, `merged`, "
        "`superseded` and `rejected`. Resending the same `message_id` stores nothing twice (200 instead of 201).",
    ),
    "spaces_turns_reply_create": (
        "Record the agent's reply",
        "Your reply to a turn, kept as context for later turns; replies are never learnt from.",
    ),
    "spaces_ingest_create": (
        "Ingest a past conversation",
        "A whole transcript (up to 500 messages) as one turn; only the customer's messages are learnt from. "
        "Sending the same transcript again stores nothing new.",
    ),
    "turns_retrieve": (
        "Get a turn",
        "A turn's status and what it learnt: the memories it `created`, `merged` and `superseded`, and the "
        "entries it `rejected` with the reason for each.",
    ),
    "turns_retry_create": (
        "Queue a failed turn again",
        "A turn that failed after its attempts, queued again with fresh ones (after a fix, or when its error was "
        "outside Engram). 409 unless the turn failed. Needs the `admin` scope.",
    ),
    # Recall and forgetting
    "spaces_recall_create": (
        "Recall what is known about a customer",
        "What the space holds that answers `query`, in any language: `memories` (each with its `score`) and a "
        "`prompt` block. Empty when nothing is close enough — then the agent should not guess. `max_chars` is "
        "the room you have: it is filled best first and `left_out` counts answering memories that did not fit.",
    ),
    "spaces_forget_create": (
        "Forget what a customer asks to be forgotten",
        "Deletes, permanently and audited, the memories the customer's request names (in any language) and "
        "answers with a `confirmation` to say back. `dry_run: true` deletes nothing and lists the `candidates`. "
        "A request to erase everything deletes nothing and says to route it to an operator.",
    ),
    # Memories
    "spaces_memories_list": (
        "List memories",
        "The space's current memories, newest first; `include_superseded=true` adds replaced versions. Filter "
        "by `kind` and `topic`. Paginated.",
    ),
    "spaces_memories_retrieve": (
        "Get a memory",
        "One memory, with its `source`: the session, message and turn it was learnt from, and when it was said.",
    ),
    "spaces_memories_partial_update": (
        "Correct a memory",
        "Changes its content, topic or importance; a changed content or topic keeps the earlier version as "
        "history. Needs the `admin` scope.",
    ),
    "spaces_memories_destroy": (
        "Delete a memory",
        "Deletes the memory and the versions it replaced, permanently, and audits it (without its content). "
        "Needs the `admin` scope.",
    ),
    "spaces_memories_history_list": (
        "A memory's history",
        "The memory and the earlier versions it replaced, newest first, each with why it was replaced "
        "(`update`, `correction`, `merged`, `edited`, `restored`).",
    ),
    "spaces_memories_restore_create": (
        "Restore an earlier version",
        "Makes a replaced version current again; the version that replaced it becomes history. 409 when the "
        "version is already current. Needs the `admin` scope.",
    ),
    # Shared spaces
    "spaces_episodes_list": (
        "List past cases",
        "The cases (`episode`) and people's resolutions of escalations (`resolution`) of a shared space. Paginated.",
    ),
    "spaces_episodes_create": (
        "Store a past case",
        "A case an agent handled: its `inputs`, `output`, `outcome` and feedback. When a near-identical case is "
        "stored the answer is 409 `duplicate_found` listing it; say `on_duplicate` (`replace`, `merge`, `add`) "
        "to decide.",
    ),
    "spaces_episodes_retrieve": ("Get a past case", "One case of a shared space, with its search keys."),
    "spaces_episodes_partial_update": (
        "Change a past case",
        "Its output, outcome, feedback or resolution comment (inputs cannot change: store a new case). A key "
        "without the `admin` scope changes only its own agent's cases.",
    ),
    "spaces_episodes_destroy": (
        "Delete a past case",
        "Deletes the case permanently and audits it. Needs the `admin` scope.",
    ),
    "spaces_episodes_recall_create": (
        "Find similar past cases",
        "The stored cases closest to the current one, argument by argument, to reuse what worked; empty when "
        "none is close enough.",
    ),
    "spaces_escalations_resolve_create": (
        "Store a person's resolution",
        "How a person resolved an escalated case (`resolution_comment`, `outcome`), so a near-identical case "
        "can later be resolved without escalating.",
    ),
    "spaces_escalations_match_create": (
        "Check before escalating",
        "`apply: true` with the `outcome` and `resolution_comment` to follow when a person already resolved a "
        "near-identical case; `apply: false` means escalate.",
    ),
    # Export and import
    "spaces_export_retrieve": (
        "Export a space",
        "Every memory (with its history) and case of the space as NDJSON, optionally sealed with a passphrase "
        "(`X-Engram-Passphrase`). Needs the `admin` scope.",
    ),
    "spaces_import_create": (
        "Import an export",
        "An export file into a space of your tenant. The whole file is checked before anything is written; "
        "importing it again skips what is there. Needs the `admin` scope.",
    ),
    # Deletion audit
    "deletions_list": (
        "Deletion audit",
        "Every deletion — by a customer's request, an operator, an API key, an erasure or retention — with who, "
        "when and why, never the content. `format=csv` for a file. For admin keys and support staff's console "
        "sessions.",
    ),
    "deletions_check_create": (
        "Was this deleted?",
        "Whether this exact text (case and spacing aside) was deleted from a space, and the audit rows that say so.",
    ),
}


def describe_operations(result, generator, request, public):
    """drf-spectacular post-processing hook: each operation's summary and description from ``OPERATIONS``."""
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict) and operation.get("operationId") in OPERATIONS:
                operation["summary"], operation["description"] = OPERATIONS[operation["operationId"]]
    return result
