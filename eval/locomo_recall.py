"""Recall against raw turns on real conversations: LoCoMo's development part, as its README says to judge it.

Each answerable question (categories 1–4) is recalled in the space of the speaker it names (both spaces when
it names neither or both, their hits taken in turns). Scored at a character budget against dense retrieval
with the same bundled model (``query:``/``passage:``) over the raw turns of the same speaker(s), each turn
prefixed with its session date as recall's event rows are:

- *answer words contained*: the share of the gold answer's words (lower case, punctuation and a few stop
  words removed) found in the text each returns, cut to the budget. Dates in either text count in the
  answers' own spelling ("2023-05-07" also reads "7 May 2023"), so neither side loses for its date format.
- *evidence reached*: the share of a question's evidence turns among the turns the returned text comes
  from — the returned memories' provenance (``source.message_id``) or the raw turns themselves — within
  the budget.

Recall is called as an agent would with that much room: ``max_chars`` = the budget, so when something
passes, the rest of the room holds the next nearest statements (``memory.recall.search._within_budget``); an
unrelated question still gets nothing.
"""

from __future__ import annotations

import datetime
import re

import numpy as np

BUDGETS = (500, 1000)
# This section at the revision before the 2026-12-02 changes (recall's own order under a budget; spaces without a
# display name, so a question naming the speaker read as about someone else).
BEFORE = (
    "revision a7cd0b1: words 41.3 % / 50.8 % (0.81×) at 500 and 48.2 % / 56.5 % (0.85×) at 1,000 characters, "
    "evidence 39.5 % / 45.0 % and 47.2 % / 51.5 %, nothing returned for 24 of 233 questions"
)
RECALL_ROWS = 40
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
STOP_WORDS = frozenset("a an the and or of to in on at for with by is was her his their".split())
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def answer_words(answer) -> list[str]:
    """The gold answer's words as they are compared.

    >>> answer_words("The sunday before 25 May, 2023")
    ['sunday', 'before', '25', 'may', '2023']
    """
    return [w for w in re.findall(r"\w+", str(answer).lower()) if w not in STOP_WORDS]


def readable_dates(text: str) -> str:
    """ISO dates also spelt as the answers spell them.

    >>> readable_dates("- [event, 2023-05-07] I went")
    '- [event, 2023-05-07 7 May 2023] I went'
    """

    def spelt(match: re.Match) -> str:
        day = datetime.date(int(match[1]), int(match[2]), int(match[3]))
        return f"{match[0]} {day.day} {day.strftime('%B')} {day.year}"

    return _ISO_DATE.sub(spelt, text)


def contained(answer, text: str) -> float:
    """Share of the answer's words found in ``text`` as whole words.

    >>> contained("7 May 2023", "- [event, 2023-05-07] support group")
    1.0
    >>> contained("Adoption agencies", "I looked at adoption agencies")
    1.0
    >>> contained("12", "In 2012")
    0.0
    """
    words = answer_words(answer)
    if not words:
        return 0.0
    lowered = readable_dates(text).lower()
    return sum(bool(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", lowered)) for w in words) / len(words)


def named_speakers(question: str, speakers: tuple[str, str]) -> tuple[str, ...]:
    """The speakers a question names by first name (or its first three letters, "Mel"); both when it names
    neither."""
    lowered = question.lower()
    named = tuple(s for s in speakers if re.search(rf"\b{re.escape(s.lower()[:3])}", lowered))
    return named or speakers


def interleaved(lists: list[list]) -> list:
    out = []
    for position in range(max((len(x) for x in lists), default=0)):
        out += [x[position] for x in lists if position < len(x)]
    return out


def within(lines: list[tuple[str, str]], budget: int) -> tuple[str, set[str]]:
    """The text of ``(line, source turn)`` pairs cut to ``budget`` characters, and the turns it draws on (a
    line cut mid-way still counts its turn)."""
    from memory.recall.prompt_block import pack_lines

    text = pack_lines([line for line, _source in lines], budget)
    sources, used = set(), 0
    for line, source in lines:
        if used >= len(text):
            break
        if source:
            sources.add(source)
        used += len(line) + 1
    return text, sources


def compare(tenant, samples: list[dict], spaces: dict, progress) -> list[dict]:
    """One result per answerable question. ``spaces``: (sample id, speaker) → the speaker's space, already
    ingested (eval/locomo.py)."""
    from eval.locomo_data import dia_ids, sessions
    from memory.models import Memory
    from memory.recall import search
    from memory.recall.prompt_block import line_for
    from memory.text.embeddings import local_embedder
    from tenants import scope

    embedder = local_embedder()
    results = []
    for sample in samples:
        conversation = sample["conversation"]
        speakers = (conversation["speaker_a"], conversation["speaker_b"])
        turns = [(t, started.date().isoformat()) for _n, started, session in sessions(conversation) for t in session]
        raw = {s: [(t, day) for t, day in turns if t["speaker"] == s] for s in speakers}
        vectors = {s: embedder.embed([t["text"] for t, _day in raw[s]]) for s in speakers}
        answerable = [qa for qa in sample["qa"] if qa.get("category") in CATEGORIES]
        progress(f"locomo recall: {sample['sample_id']}, {len(answerable)} questions …")
        question_vectors = embedder.embed([qa["question"] for qa in answerable], query=True)
        for qa, question_vector in zip(answerable, question_vectors, strict=True):
            named = named_speakers(qa["question"], speakers)
            recalled, dense = [], []  # dense: (similarity, line, turn) over the named speakers' turns
            for speaker in named:
                space = spaces[(sample["sample_id"], speaker)]
                with scope.tenant_scope(tenant, space):
                    hits = search.recall(
                        space=space, query=qa["question"], limit=RECALL_ROWS, max_chars=max(BUDGETS)
                    ).hits
                    statements = [h for h in hits if h["kind"] != "topic"]
                    source_of = dict(
                        Memory.objects.filter(pk__in=[h["id"] for h in statements]).values_list(
                            "pk", "source_message__caller_message_id"
                        )
                    )
                recalled.append([(line_for(h), source_of.get(h["id"]) or "") for h in statements])
                nearest = np.argsort(-(vectors[speaker] @ question_vector))[:RECALL_ROWS]
                for i in nearest:
                    turn, day = raw[speaker][i]
                    score = float(vectors[speaker][i] @ question_vector)
                    dense.append((score, f"- [{day}] {turn['text']}", turn["dia_id"]))
            # Dense over both speakers' turns is one ranking: nearest first across them.
            dense_lines = [(line, source) for _score, line, source in sorted(dense, key=lambda x: -x[0])]
            evidence = {d for e in qa.get("evidence", []) for d in dia_ids(e)}
            row = {
                "question": qa["question"],
                "answer": str(qa["answer"]),
                "category": qa["category"],
                "empty": not any(recalled),
                "evidence": len(evidence),
            }
            for budget in BUDGETS:
                engram_text, engram_sources = within(interleaved(recalled), budget)
                raw_text, raw_sources = within(dense_lines, budget)
                row[f"engram_{budget}"] = contained(qa["answer"], engram_text)
                row[f"raw_{budget}"] = contained(qa["answer"], raw_text)
                row[f"engram_evidence_{budget}"] = len(evidence & engram_sources)
                row[f"raw_evidence_{budget}"] = len(evidence & raw_sources)
                row[f"engram_chars_{budget}"] = len(engram_text)
                row[f"texts_{budget}"] = (engram_text, raw_text)  # for reading a question's result, not reported
            results.append(row)
    return results


def report_lines(results: list[dict], header: str) -> list[str]:
    def mean(key, rows):
        return sum(r[key] for r in rows) / len(rows) if rows else 0.0

    def evidence_share(key, rows):
        total = sum(r["evidence"] for r in rows)
        return sum(r[key] for r in rows) / total if total else 0.0

    groups = [("all", results)] + [
        (f"{number} {name}", [r for r in results if r["category"] == number]) for number, name in CATEGORIES.items()
    ]
    lines = [
        "## Recall on real conversations: against raw turns (LoCoMo development part)",
        "",
        header,
        "",
        "The same spaces as above; each answerable question (categories 1–4) recalled in the space of the speaker "
        "it names (both when it names neither; the space's display name is the speaker's, as a deployment names "
        "its customer), with the room of the budget (`max_chars`). Against dense "
        "retrieval with the same bundled model over that speaker's raw turns, each with its session date, at the "
        "same character budget (eval/locomo_recall.py). *Words*: share of the gold answer's words contained; "
        "*evidence*: share of the evidence turns the returned text comes from. #27's bar: words ≥ 1.2× dense at "
        "500 and 1,000 characters, evidence ≥ dense.",
        "",
        "| questions | words, Engram / dense, 500 | ratio | words, 1,000 | ratio | evidence, Engram / dense, 500 "
        "| evidence, 1,000 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rows in groups:
        cells = [f"{name} ({len(rows)})"]
        for budget in BUDGETS:
            engram, raw = mean(f"engram_{budget}", rows), mean(f"raw_{budget}", rows)
            cells += [f"{100 * engram:.1f} % / {100 * raw:.1f} %", f"{engram / raw:.2f}×" if raw else "–"]
        for budget in BUDGETS:
            engram = evidence_share(f"engram_evidence_{budget}", rows)
            raw = evidence_share(f"raw_evidence_{budget}", rows)
            cells.append(f"{100 * engram:.1f} % / {100 * raw:.1f} %")
        lines.append("| " + " | ".join(cells) + " |")
    empty = sum(r["empty"] for r in results)
    lines += [
        "",
        f"Recall returned nothing for {empty} of {len(results)} questions; its text filled "
        f"{mean('engram_chars_500', results):.0f} of 500 and {mean('engram_chars_1000', results):.0f} of 1,000 "
        "characters on average (dense always fills the budget).",
        "",
        f"Before, {BEFORE}.",
        "",
    ]
    return lines
