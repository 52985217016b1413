"""The write rules of issue 16 on labelled cases of our own (eval/data/write_*): corrections and real
updates supersede, statements that only share a topic word do not, restatements merge while different
statements stay apart, small talk is not stored and stored content is clean.

The rules come from the code the writer runs (``merge_rule.supersession``, ``merge_rule.is_restatement``,
the offline extractor, the bundled embedding model); the casual history goes through the whole turn
pipeline, one turn per statement.
"""

from __future__ import annotations

import collections
import datetime
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
LANGUAGES = ["en", "ru", "ja", "cs", "es", "cross"]
# Topic names the issue found and that name no subject.
NOT_TOPICS = {"answer", "prefer", "arrive", "change", "sentence", "correction", "actually"}
SENT_AT = datetime.datetime(2026, 3, 2, 10, tzinfo=datetime.UTC)


def load_jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def _statements(extractor, text: str):
    from memory.extraction.engine import CustomerText

    return [c for c in extractor.extract(CustomerText(text=text, sent_at=SENT_AT)) if c.kind != "topic"]


def evaluate_updates() -> dict:
    """Per pair: does the newer message supersede the older one, as the writer decides it?"""
    from memory.dedup.merge_rule import is_restatement, supersession
    from memory.dedup.writer import STATEMENT_KINDS, UPDATE_SEARCH_DISTANCE
    from memory.extraction.registry import get_extractor
    from memory.text.embeddings import cosine_distances, get_embedder

    extractor, embedder = get_extractor(), get_embedder()
    items = load_jsonl("write_updates.jsonl")
    for item in items:
        old_entries, new_entries = _statements(extractor, item["before"]), _statements(extractor, item["after"])
        texts = [e.content for e in old_entries + new_entries]
        vectors = embedder.embed(texts) if texts else []
        old_vectors, new_vectors = vectors[: len(old_entries)], vectors[len(old_entries) :]
        superseded = False
        for new, new_vector in zip(new_entries, new_vectors, strict=True):
            for old, old_vector in zip(old_entries, old_vectors, strict=True):
                distance = float(cosine_distances(old_vector[None, :], new_vector)[0])
                if new.kind == old.kind and is_restatement(
                    old.content, new.content, distance, dedup_distance=0.07, requires_same_terms=True
                ):
                    continue  # merged, not superseded
                if (
                    new.kind in STATEMENT_KINDS and old.kind in STATEMENT_KINDS
                    and distance <= UPDATE_SEARCH_DISTANCE and supersession(old.content, new.content, new.quote)
                ):  # fmt: skip
                    superseded = True
        item["superseded"] = superseded
        item["stored"] = [e.content for e in new_entries]

    def scores(rows):
        positives = [r for r in rows if r["supersedes"]]
        negatives = [r for r in rows if not r["supersedes"]]
        return {
            "items": len(rows),
            "found": sum(r["superseded"] for r in positives) / len(positives) if positives else None,
            "false": sum(r["superseded"] for r in negatives),
            "negatives": len(negatives),
        }

    by_class = collections.defaultdict(list)
    for item in items:
        by_class[item["class"]].append(item)
    return {
        "per_class": {name: scores(rows) for name, rows in by_class.items()},
        "per_language": {
            name: {lang: scores([r for r in rows if r["lang"] == lang]) for lang in LANGUAGES}
            for name, rows in by_class.items()
        },
        "mistakes": [i for i in items if i["superseded"] != i["supersedes"]],
    }


def evaluate_restatements(dedup_distance: float) -> dict:
    from memory.dedup.merge_rule import is_restatement
    from memory.text.embeddings import cosine_distances, get_embedder

    embedder = get_embedder()
    sets = {
        "dedup.jsonl": load_jsonl("dedup.jsonl"),
        "write_restatements.jsonl": load_jsonl("write_restatements.jsonl"),
    }
    for pairs in sets.values():
        vectors_a, vectors_b = embedder.embed([p["a"] for p in pairs]), embedder.embed([p["b"] for p in pairs])
        for pair, a, b in zip(pairs, vectors_a, vectors_b, strict=True):
            distance = float(cosine_distances(a[None, :], b)[0])
            pair["merged"] = is_restatement(
                pair["a"], pair["b"], distance, dedup_distance=dedup_distance, requires_same_terms=True
            )

    def scores(rows):
        positives = sum(r["same"] for r in rows)
        return {
            "pairs": len(rows),
            "recall": sum(r["merged"] and r["same"] for r in rows) / positives if positives else None,
            "wrong": sum(r["merged"] and not r["same"] for r in rows),
        }

    everything = [p for pairs in sets.values() for p in pairs]
    return {
        "per_set": {name: scores(pairs) for name, pairs in sets.items()},
        "all": scores(everything),
        "per_language": {lang: scores([p for p in everything if p["lang"] == lang]) for lang in LANGUAGES},
        "new_per_language": {
            lang: scores([p for p in sets["write_restatements.jsonl"] if p["lang"] == lang]) for lang in LANGUAGES
        },
        "mistakes": [p for p in sets["write_restatements.jsonl"] if p["merged"] != p["same"]],
    }


def evaluate_clean_entries() -> dict:
    from memory.extraction.engine import CustomerText
    from memory.extraction.registry import get_extractor
    from memory.text.analysis import proper_names

    extractor = get_extractor()
    items = load_jsonl("write_clean.jsonl")
    for item in items:
        entries = extractor.extract(CustomerText(text=item["message"], sent_at=SENT_AT))
        item["stored"] = [e.content for e in entries if e.kind != "topic"]
        names = proper_names(item["message"])
        item["bad_topics"] = [
            e.topic for e in entries if e.topic and (e.topic.lower() in NOT_TOPICS or e.topic.lower() in names)
        ]
        item["exact"] = sorted(item["stored"]) == sorted(item["expected"])

    def scores(rows):
        return {
            "items": len(rows),
            "exact": sum(r["exact"] for r in rows) / len(rows) if rows else None,
            "stored_small_talk": sum(len(r["stored"]) for r in rows if r["class"] == "small_talk"),
            "bad_topics": sum(len(r["bad_topics"]) for r in rows),
        }

    return {
        "per_class": {c: scores([i for i in items if i["class"] == c]) for c in ("small_talk", "clean")},
        "per_language": {
            c: {lang: scores([i for i in items if i["class"] == c and i["lang"] == lang]) for lang in LANGUAGES[:-1]}
            for c in ("small_talk", "clean")
        },
        "mistakes": [i for i in items if not i["exact"] or i["bad_topics"]],
    }


def evaluate_history(tenant, name: str = "write_history.json") -> dict:
    """A casual history, one turn per statement: how much is superseded, and was each one a real update?"""
    from memory.models import Memory
    from memory.turns.sequence import take_turn
    from tenants import scope, spaces

    script = json.loads((DATA / name).read_text())
    statements = script["statements"]
    customers = {}
    with scope.tenant_scope(tenant):
        for customer in dict.fromkeys(s.get("customer", "one") for s in statements):
            external_id = f"write-rules-{name.removesuffix('.json')}-{customer}"
            customers[customer] = spaces.create_space(tenant=tenant, external_id=external_id)
    created_by: dict = {}
    supersessions = []
    total = superseded = 0
    for index, statement in enumerate(statements):
        space = customers[statement.get("customer", "one")]
        with scope.tenant_scope(tenant, space):
            turn = take_turn(
                space=space,
                message=statement["text"],
                session_id=f"week-{index // 5}",
                at=SENT_AT + datetime.timedelta(days=index),
                actor="eval",
                wait=True,
            ).turn
        for memory_id in turn.created_ids:
            created_by[memory_id] = index
        supersessions += [(created_by.get(old), index) for old in turn.superseded_ids]
    for space in customers.values():
        with scope.tenant_scope(tenant, space):
            rows = Memory.objects.filter(space=space, kind__in=("fact", "event")).exclude(superseded_reason="merged")
            total += rows.count()
            superseded += rows.filter(superseded_by__isnull=False).count()
    labelled = {(s["updates"], i) for i, s in enumerate(statements) if "updates" in s}
    found = [pair for pair in supersessions if pair in labelled]
    false = [pair for pair in supersessions if pair not in labelled]
    return {
        "name": name,
        "statements": len(statements),
        "rows": total,
        "superseded": superseded,
        "labelled": len(labelled),
        "found": len(found),
        "false": [(statements[old]["text"] if old is not None else "?", statements[new]["text"]) for old, new in false],
        "missed": [
            (statements[old]["text"], statements[new]["text"]) for old, new in sorted(labelled - set(supersessions))
        ],
    }


# Customers' profiles (14, 12, 10 and 10 customers, a language each, ~22-26 statements: attributes that share
# words, a few real updates), written by helpers that never saw the code. All four are development sets now: the
# first was read for the 2026-12-05 change to the rules, the second after the subject readings, the third after
# its final score that day, the fourth after one change that was not kept (report_lines says which figures came
# before that).
PROFILES = (
    "write_profiles_heldout.json",
    "write_profiles_untouched.json",
    "write_profiles_fresh.json",
    "write_profiles_fresh2.json",
)


def evaluate(tenant, dedup_distance: float) -> dict:
    return {
        "updates": evaluate_updates(),
        "restatements": evaluate_restatements(dedup_distance),
        "clean": evaluate_clean_entries(),
        "history": evaluate_history(tenant),
        "held_out": evaluate_history(tenant, "write_history_heldout.json"),
        "profiles": [evaluate_history(tenant, name) for name in PROFILES if (DATA / name).exists()],
    }


def _pct(value) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def report_lines(result: dict) -> list[str]:
    updates, restatements, clean, history = (
        result["updates"], result["restatements"], result["clean"], result["history"]
    )  # fmt: skip
    counts = {name: len(load_jsonl(name)) for name in ("write_updates.jsonl", "write_restatements.jsonl",
                                                       "write_clean.jsonl")}  # fmt: skip
    lines = [
        "",
        "## Write rules: corrections, real updates, restatements, clean entries",
        "",
        f"Labelled cases of our own: {counts['write_updates.jsonl']} pairs of messages (eval/data/write_updates.jsonl: "
        f"corrections, real updates, statements that only share a topic word), {counts['write_restatements.jsonl']} "
        f"restatement pairs (eval/data/write_restatements.jsonl), {counts['write_clean.jsonl']} messages of small talk "
        "and of statements with greetings or markers (eval/data/write_clean.jsonl), and two casual histories "
        f"({history['statements']} and {result['held_out']['statements']} statements, eval/data/write_history*.json). "
        "The rule: a newer statement supersedes "
        "an older one only with the same subject, the same attribute and another value, or when the customer's "
        "correction names the old value (`memory/dedup/merge_rule.py`).",
        "",
        "### Supersession by class",
        "",
        "| Class | Pairs | Supersessions found (where one is due) | False supersessions |",
        "| --- | --- | --- | --- |",
        *[
            f"| {name} | {s['items']} | {_pct(s['found'])} | {s['false']} of {s['negatives']} |"
            for name, s in updates["per_class"].items()
        ],
        "",
        "| Class | " + " | ".join(LANGUAGES) + " |",
        "| --- |" + " --- |" * len(LANGUAGES),
        *[
            f"| {name} | "
            + " | ".join(
                f"{_pct(s['found'])}, {s['false']} false" if s["items"] else "—" for s in per_language.values()
            )
            + " |"
            for name, per_language in updates["per_language"].items()
        ],
        "",
        "Pairs not decided as labelled:",
        "",
        *(
            [
                f"- `{m['id']}`: “{m['before']}” → “{m['after']}” (stored {m['stored']}): "
                f"{'superseded' if m['superseded'] else 'both kept'}, expected "
                f"{'superseded' if m['supersedes'] else 'both kept'}"
                for m in updates["mistakes"]
            ]
            or ["- none"]
        ),
        "",
        "### Casual histories",
        "",
        "One turn per statement, through the whole pipeline. The first history was used to tune the rules; the "
        "second (five languages) was written afterwards and not used to tune them. The profiles (a customer per "
        "language, statements about many attributes that share words — a home airport beside where they live, a "
        "pet's name beside theirs, the phone beside its number — and a few real updates): "
        "write_profiles_heldout.json was scored once before the 2026-12-05 change to the rules and read for it; "
        "write_profiles_untouched.json was scored once per change and its failures read only after the "
        "statement-subject readings (2026-12-05), so the learned phone and car updates that followed were tuned "
        "without it but not blind to it; write_profiles_fresh.json, written then by another helper, was read after its "
        "final score that day. write_profiles_fresh2.json (pl hu fi ko hr bg ca nb sk de, written 2026-12-05 by a "
        "helper that saw none of the code or the other files) was scored at the rules below (8 of 45 found, 5 "
        "false), then once for a change that was not kept (a move said in passing, with the residence read at "
        "0.4: 9 of 45, 7 false; with the new statement read as the customer's own: 8 of 45, 5 false), and its "
        "failures read: a development split from then on.",
        "",
        "| History | Statements | Fact and event rows | Superseded | Labelled real updates found | "
        "False supersessions |",
        "| --- | --- | --- | --- | --- | --- |",
        *[
            f"| {h['name']} | {h['statements']} | {h['rows']} | {h['superseded']} "
            f"({_pct(h['superseded'] / h['rows'] if h['rows'] else None)}) | {h['found']} of {h['labelled']} | "
            f"{len(h['false'])} |"
            for h in (history, result["held_out"], *result.get("profiles", []))
        ],
        "",
        *[
            f"- {h['name']}, {label}: “{old}” → “{new}”"
            for h in (history, result["held_out"], *result.get("profiles", []))
            for label, pairs in (("false supersession", h["false"]), ("missed", h["missed"]))
            for old, new in pairs
            if label != "missed" or h in (history, result["held_out"])
        ],
        "",
        "### Restatements",
        "",
        "At the default dedup distance, with the merge rule (same values, same relation words, key terms contained "
        "once synonyms are folded).",
        "",
        "| Set | Pairs | Merge recall | Wrong merges |",
        "| --- | --- | --- | --- |",
        *[
            f"| {name} | {s['pairs']} | {_pct(s['recall'])} | {s['wrong']} |"
            for name, s in [*restatements["per_set"].items(), ("both", restatements["all"])]
        ],
        "",
        "| Language | Pairs (both sets) | Merge recall | Wrong merges |",
        "| --- | --- | --- | --- |",
        *[
            f"| {lang} | {s['pairs']} | {_pct(s['recall'])} | {s['wrong']} |"
            for lang, s in restatements["per_language"].items()
        ],
        "",
        "New restatement pairs not decided as labelled:",
        "",
        *(
            [
                f"- `{m['id']}`: “{m['a']}” / “{m['b']}”: {'merged' if m['merged'] else 'kept apart'}"
                for m in restatements["mistakes"]
            ]
            or ["- none"]
        ),
        "",
        "### Small talk and clean entries (offline extractor)",
        "",
        "| Class | Messages | Stored exactly as labelled | Small-talk entries stored | Topics that name no subject |",
        "| --- | --- | --- | --- | --- |",
        *[
            f"| {name} | {s['items']} | {_pct(s['exact'])} | {s['stored_small_talk']} | {s['bad_topics']} |"
            for name, s in clean["per_class"].items()
        ],
        "",
        "| Class | " + " | ".join(LANGUAGES[:-1]) + " |",
        "| --- |" + " --- |" * (len(LANGUAGES) - 1),
        *[
            f"| {name} | " + " | ".join(_pct(s["exact"]) for s in per_language.values()) + " |"
            for name, per_language in clean["per_language"].items()
        ],
        "",
        "Messages not stored as labelled:",
        "",
        *(
            [
                f"- `{m['id']}`: “{m['message']}” → {m['stored']} (topics off: {m['bad_topics']})"
                for m in clean["mistakes"]
            ]
            or ["- none"]
        ),
        "",
    ]
    return lines
