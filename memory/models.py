"""Sessions, messages, derived memories and the record of each processed turn.

All text a customer wrote, and everything derived from it, is an ``EncryptedTextField`` under the
space's key. Lookups that need equality on such text (message replay, topic match) use keyed
digests (HMAC under the space key), never plaintext or a bare hash.
"""

from __future__ import annotations

import json
import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from pgvector.django import HalfVectorField

from tenants.encrypted_fields import EncryptedTextField
from tenants.models import Space, Tenant, TenantOwnedManager, same_tenant_key

EMBEDDING_DIMENSIONS = 384


def space_key(related_name: str = "+") -> models.ForeignKey:
    """The space a row belongs to; ``related_name`` names the reverse accessor (``space.memories``)."""
    return same_tenant_key(Space, related_name=related_name)


class SpaceOwned(models.Model):
    """A row of one space of one tenant: every memory table.

    ``tenant_id`` is the column row-level security filters on (``tenants.rls``, called by the
    migrations); the space is the unit of the encryption key and of the write lock
    (``memory.store.lock``). A model that wants a reverse accessor on ``Space`` redeclares
    ``space = space_key("name")``.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    space = space_key()
    objects = TenantOwnedManager()

    class Meta:
        abstract = True


class Timestamped(models.Model):
    """When a row was written and last changed."""

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class Session(SpaceOwned):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    space = space_key("sessions")
    # The caller's session id, or one derived from the space and the first message.
    external_id = models.CharField(max_length=128)
    channel = models.CharField(max_length=64, blank=True, default="")
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too
        constraints = [
            models.UniqueConstraint(fields=["tenant", "space", "external_id"], name="session_external_id_per_space")
        ]


class Message(SpaceOwned):
    class Role(models.TextChoices):
        CUSTOMER = "customer"
        AGENT = "agent"
        SYSTEM = "system"
        TOOL = "tool"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    space = space_key("messages")
    session = same_tenant_key(Session, related_name="messages")
    # Content address: HMAC(space key, session, role, content) or of the caller's message id.
    digest = models.CharField(max_length=64)
    role = models.CharField(max_length=16, choices=Role.choices)
    # The id the caller sent with the message (``message_id``), shown as the provenance of what it taught.
    caller_message_id = models.CharField(max_length=200, blank=True, default="")
    # The turn an agent's line answers: the turn of ``POST …/turns/{id}/reply``, or the transcript it was ingested
    # in (its system and tool lines too). Null for customer lines (a turn lists those in ``Turn.message_ids``).
    # Forgetting a memory drops the text of these lines with the customer's, as a reply may quote what it learnt.
    # A plain id like ``Turn.message_ids``: no foreign key, so erasing a space deletes its turns without a pass
    # over its messages.
    answers_turn_id = models.UUIDField(null=True, blank=True)
    # Null once the turn is processed when the space does not keep transcripts.
    content = EncryptedTextField(null=True, blank=True)
    # Blind keyword index of the kept text (transcript recall); empty when the text is not kept.
    keyword_digests = ArrayField(models.CharField(max_length=32), default=list, blank=True)
    # The turn request's vector of ``content`` (this space's transform, as ``vectors_by_text`` gives it),
    # kept only until the pipeline has processed the turn, so the worker need not embed the message again:
    # NULL once the turn is done or finally failed, and whenever the text is dropped. Never exported.
    pending_embedding = HalfVectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    # The engine that made it (its name): after a model change the worker embeds the text again.
    pending_embedding_model = models.CharField(max_length=100, blank=True, default="")
    # Written wherever the pending vector is no longer wanted (its turn done or failed for good, a model change).
    NO_PENDING_VECTOR = {"pending_embedding": None, "pending_embedding_model": ""}
    # Written wherever the text is dropped (a forget request, a transcript not kept, retention): nothing
    # derived from it stays either.
    TEXT_DROPPED = {"content": None, "keyword_digests": [], **NO_PENDING_VECTOR}
    sent_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too
        constraints = [models.UniqueConstraint(fields=["tenant", "space", "digest"], name="message_digest_per_space")]
        indexes = [
            models.Index(fields=["session", "sent_at"]),
            GinIndex(fields=["keyword_digests"], name="message_keyword_digests"),
        ]


class Memory(SpaceOwned, Timestamped):
    class Kind(models.TextChoices):
        FACT = "fact"
        TOPIC = "topic"
        EVENT = "event"
        INSTRUCTION = "instruction"
        TASK = "task"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    space = space_key("memories")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    content = EncryptedTextField()
    topic = EncryptedTextField(null=True, blank=True)
    # HMAC of the normalised topic key under the space key: exact topic matches without plaintext.
    topic_digest = models.CharField(max_length=64, blank=True, default="")
    # Blind keyword index: HMACs of normalised tokens under the space key (recall, issue 4).
    keyword_digests = ArrayField(models.CharField(max_length=32), default=list, blank=True)
    # halfvec, not vector: see docs/decisions/0004-halfvec-and-exact-scans.md
    embedding = HalfVectorField(dimensions=EMBEDDING_DIMENSIONS)
    importance = models.FloatField()
    mention_count = models.PositiveIntegerField(default=1)
    source_session = same_tenant_key(Session, null=True, related_name="+")
    source_message = same_tenant_key(Message, null=True, related_name="+")
    # The messages of the earlier mentions a merge folded into this row (source_message is the latest):
    # forgetting the row drops their text too, so no transcript line of a restated fact is left behind.
    earlier_source_message_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    superseded_by = same_tenant_key("self", null=True, related_name="supersedes")
    # Why this row is history: "update" or "correction" (a newer statement replaced it), "merged" (the
    # wording a merge rewrote), "restored" (an operator brought back an older version). Empty while current.
    superseded_reason = models.CharField(max_length=16, blank=True, default="")
    # Tasks belong to the session they were given in.
    task_session = same_tenant_key(Session, null=True, related_name="tasks")
    event_at = models.DateTimeField(null=True, blank=True)
    # Keyed digest of (export id, record id) for rows brought in by an import: re-importing is a no-op.
    origin_digest = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too
        indexes = [
            models.Index(fields=["space", "kind"], name="memory_space_kind"),
            models.Index(fields=["space", "origin_digest"], name="memory_space_origin"),
            models.Index(fields=["space", "topic_digest"], name="memory_space_topic"),
            GinIndex(fields=["keyword_digests"], name="memory_keyword_digests"),
        ]


class Turn(SpaceOwned, Timestamped):
    """One customer message (or transcript) through the pipeline: its status and what it wrote."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        PROCESSING = "processing"
        DONE = "done"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    space = space_key("turns")
    session = same_tenant_key(Session, related_name="turns")
    # Replay key: the message digest (one message) or a digest of all message digests (a transcript).
    source_digest = models.CharField(max_length=64)
    message_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    created_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    merged_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    superseded_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    # Entries that would have superseded a memory past the turn's supersession limit: written beside it.
    held_back_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    # JSON list of {"content", "reason"}, encrypted: rejected text is customer text too.
    rejected = EncryptedTextField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    # The message was a forget request or a correction that deleted something: it is not mined.
    forget_handled = models.BooleanField(default=False)
    # What the customer was told when the message was checked for forgetting, without any content:
    # {"language", "template": "done" | "nothing" | "needs_operator", "memory_ids", "more_matched"}.
    # The console renders it again with memory ids in place of the deleted text (memory.forgetting.conversational).
    forget_reply = models.JSONField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # The chat model stayed down past ENGRAM_MODEL_WAIT_SECONDS: the offline engine derived this turn.
    derived_offline = models.BooleanField(default=False)

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too
        constraints = [
            models.UniqueConstraint(fields=["tenant", "space", "source_digest"], name="turn_source_per_space")
        ]
        indexes = [models.Index(fields=["space", "created_at"]), models.Index(fields=["status", "next_attempt_at"])]


class DeletionAudit(models.Model):
    """One deleted memory, for support staff: when, where, why, under which limits — never the content.

    Append-only: a database trigger refuses UPDATE and DELETE, also for the application's role.
    The space is recorded by value (no foreign key), so the record outlives an erased space.
    """

    class Cause(models.TextChoices):
        CUSTOMER_REQUEST = "customer_request"
        OPERATOR = "operator"
        API_KEY = "api_key"
        SPACE_ERASURE = "space_erasure"
        RETENTION = "retention"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant_id = models.UUIDField(db_index=True)
    occurred_at = models.DateTimeField(auto_now_add=True, db_index=True)
    space_uuid = models.UUIDField()
    space_external_id = models.CharField(max_length=128)
    memory_id = models.UUIDField()
    memory_kind = models.CharField(max_length=16)
    cause = models.CharField(max_length=32, choices=Cause.choices)
    turn_id = models.UUIDField(null=True, blank=True)
    actor = models.CharField(max_length=200, blank=True, default="")
    matched_distance = models.FloatField(null=True, blank=True)
    limits = models.JSONField(default=dict, blank=True)
    # HMAC of the normalised deleted text under the audit key: confirms a text without keeping it.
    content_digest = models.CharField(max_length=64)

    objects = TenantOwnedManager()

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too
        indexes = [
            models.Index(fields=["tenant_id", "space_external_id", "occurred_at"]),
            models.Index(fields=["tenant_id", "content_digest"]),
        ]


class Episode(SpaceOwned, Timestamped):
    """A past case in a shared space: an agent's run (inputs → output, outcome, feedback) or a
    person's resolution of an escalation (input → resolution comment, outcome).

    ``inputs`` and ``search_keys`` are JSON objects, encrypted: the inputs as given (a file input is
    kept as its metadata) and, per argument, the text that is actually embedded and matched — a
    long text compressed to its meaning, a file turned into a summary. Inputs are never edited.
    """

    class Kind(models.TextChoices):
        EPISODE = "episode"
        RESOLUTION = "resolution"

    class Sentiment(models.TextChoices):
        POSITIVE = "positive"
        NEGATIVE = "negative"
        NEUTRAL = "neutral"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    space = space_key("episodes")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    agent = models.CharField(max_length=100, blank=True, default="")
    inputs = EncryptedTextField()
    search_keys = EncryptedTextField()
    output = EncryptedTextField(null=True, blank=True)
    outcome = EncryptedTextField(null=True, blank=True)
    resolution_comment = EncryptedTextField(null=True, blank=True)
    sentiment = models.CharField(max_length=16, choices=Sentiment.choices, blank=True, default="")
    feedback_comment = EncryptedTextField(null=True, blank=True)
    origin_digest = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too
        indexes = [
            models.Index(fields=["space", "kind", "created_at"], name="episode_space_kind"),
            models.Index(fields=["space", "origin_digest"], name="episode_space_origin"),
        ]

    @property
    def inputs_dict(self) -> dict:
        return json.loads(self.inputs)

    @property
    def search_keys_dict(self) -> dict:
        return json.loads(self.search_keys)


class EpisodeKey(SpaceOwned):
    """One argument of an episode as it is matched: its embedding and blind keyword index."""

    id = models.BigAutoField(primary_key=True)
    episode = same_tenant_key(Episode, related_name="keys")
    argument = models.CharField(max_length=64)
    embedding = HalfVectorField(dimensions=EMBEDDING_DIMENSIONS)
    keyword_digests = ArrayField(models.CharField(max_length=32), default=list, blank=True)

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too
        constraints = [
            models.UniqueConstraint(fields=["tenant", "episode", "argument"], name="episode_key_per_argument")
        ]
        indexes = [models.Index(fields=["space", "argument"], name="episode_key_space_argument")]


class SpaceAgent(SpaceOwned):
    """An agent seen using a shared space: who a change of the space's matching settings affects."""

    id = models.BigAutoField(primary_key=True)
    space = space_key("agents")
    agent = models.CharField(max_length=100)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField()

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too
        constraints = [models.UniqueConstraint(fields=["tenant", "space", "agent"], name="space_agent_once")]


class PairMark(SpaceOwned):
    """An operator's judgement that two memories of a space say the same thing or not: their own
    labelled data for the dedup distance (the thresholds page shows precision and recall on it)."""

    class Label(models.TextChoices):
        SAME = "same"
        DIFFERENT = "different"

    id = models.BigAutoField(primary_key=True)
    first = same_tenant_key(Memory, related_name="+")
    second = same_tenant_key(Memory, related_name="+")
    label = models.CharField(max_length=16, choices=Label.choices)
    marked_by = models.CharField(max_length=200)
    marked_at = models.DateTimeField(auto_now=True)

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too
        constraints = [models.UniqueConstraint(fields=["tenant", "first", "second"], name="pair_mark_once")]
