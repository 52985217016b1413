"""Grounding measured as a classifier: faithful rewrites admitted, near-miss fabrications refused.

`python -m eval.grounding` (part of `make eval`) runs the grounding a turn's entries go through
(``memory.extraction.grounding.ground``: the quote, the values, names, dates and negations, the share of
words an entry may reword, the distance of its meaning) over two labelled files of entries a model
could write from one customer message:

- ``eval/data/grounding/tune.jsonl`` (en, de, ru, cs, es, fr): the file ``PARAPHRASE_MISSING_SHARE``
  was chosen on (``python -m eval.grounding tune`` prints the sweep);
- ``eval/data/grounding/heldout.jsonl`` (pl, it, pt, nl, sv and en, written separately): never read
  while tuning the share, but read once for which languages may be reworded;
- ``eval/data/grounding/heldout_fresh.jsonl`` (ro, nb, sk, uk, tr, written 2026-12-02 by a hand that never
  read the grounding code): never read, tuned or trained on; its figures are the honest ones.

Each row is a faithful rewrite (third person with the customer's name, "the customer", synonyms, a
summary, two sentences combined, a name from another message, a date resolved from the message's
date) or the same with one thing changed (a number, date, name, polarity, person, common noun, an
added claim, someone else's words). Precision: of what is admitted, the share that is faithful;
recall: of the faithful rows, the share admitted.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import json
import sys
from pathlib import Path

import numpy as np

from bench.harness import setup_django
from eval.report_sections import pct, replace_section

DATA = Path(__file__).resolve().parent / "data" / "grounding"
SHARE_GRID = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]


def load(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def verdicts(rows: list[dict], missing_share: float | None = None, *, admit_rewrites: bool = True) -> list[str | None]:
    """The rejection reason of each row's entry (None when admitted), as the turn pipeline grounds it."""
    from memory.extraction import grounding
    from memory.extraction.engine import Candidate
    from memory.text.analysis import split_sentences
    from memory.text.embeddings import local_embedder

    embedder = local_embedder()
    texts = sorted({r["entry"] for r in rows} | {s for r in rows for s in split_sentences(r["message"])})
    vector_of = dict(zip(texts, embedder.embed(texts), strict=True))
    saved = grounding.PARAPHRASE_MISSING_SHARE
    if missing_share is not None:
        grounding.PARAPHRASE_MISSING_SHARE = missing_share
    try:
        reasons = []
        for row in rows:
            candidate = Candidate(
                kind="fact", content=row["entry"], topic="", importance=0.5, keywords=[], quote=row["quote"]
            )
            sentences = split_sentences(row["message"]) or [row["message"]]
            sent_at = datetime.datetime.fromisoformat(row["sent_at"]).replace(tzinfo=datetime.UTC)
            speaker = (
                grounding.Speaker.of(row["customer"], "\n".join([row["message"], *row["other_messages"]]), sent_at)
                if admit_rewrites
                else grounding.NO_SPEAKER
            )
            _, rejected = grounding.ground(
                [candidate],
                np.stack([vector_of[row["entry"]]]),
                row["message"],
                np.stack([vector_of[s] for s in sentences]),
                speaker,
                admit_rewrites=admit_rewrites,
            )
            reasons.append(rejected[0].reason if rejected else None)
        return reasons
    finally:
        grounding.PARAPHRASE_MISSING_SHARE = saved


@dataclasses.dataclass
class Score:
    faithful: int = 0
    faithful_admitted: int = 0
    fabricated: int = 0
    fabricated_admitted: int = 0

    def add(self, supported: bool, admitted: bool) -> None:
        if supported:
            self.faithful += 1
            self.faithful_admitted += admitted
        else:
            self.fabricated += 1
            self.fabricated_admitted += admitted

    @property
    def recall(self) -> float | None:
        return self.faithful_admitted / self.faithful if self.faithful else None

    @property
    def precision(self) -> float | None:
        admitted = self.faithful_admitted + self.fabricated_admitted
        return self.faithful_admitted / admitted if admitted else None


def score(rows: list[dict], reasons: list[str | None]) -> dict[str, dict[str, Score]]:
    by: dict[str, dict[str, Score]] = {"all": collections.defaultdict(Score), "lang": collections.defaultdict(Score),
                                       "change": collections.defaultdict(Score)}  # fmt: skip
    for row, reason in zip(rows, reasons, strict=True):
        supported, admitted = row["label"] == "supported", reason is None
        for key, value in (("all", "all"), ("lang", row["lang"]), ("change", row["change"])):
            by[key][value].add(supported, admitted)
    return by


def tune() -> None:
    """The sweep the share was chosen on: the tuning file only."""
    rows = load("tune.jsonl")
    for share in SHARE_GRID:
        total = score(rows, verdicts(rows, share))["all"]["all"]
        print(
            f"share {share:.1f}: faithful admitted {total.faithful_admitted}/{total.faithful} "
            f"({pct(total.recall)}), fabrications admitted {total.fabricated_admitted}/{total.fabricated}, "
            f"precision {pct(total.precision)}"
        )


def _rows_of(scores: dict[str, Score], faithful: bool) -> list[str]:
    lines = []
    for key, s in sorted(scores.items()):
        if faithful and s.faithful:
            lines.append(f"| {key} | {s.faithful_admitted} / {s.faithful} | {pct(s.recall)} |")
        elif not faithful and s.fabricated:
            lines.append(
                f"| {key} | {s.fabricated_admitted} / {s.fabricated} | {pct(s.fabricated_admitted / s.fabricated)} |"
            )
    return lines


BOTH = ((False, "verbatim"), (True, "rewrites"))
REWRITES_ONLY = ((True, "rewrites"),)


def report() -> list[str]:
    from memory.extraction.grounding import PARAPHRASE_MISSING_SHARE, WIDER_PARAPHRASE_MISSING_SHARE

    lines = [
        "## Grounding: faithful rewrites and near-miss fabrications",
        "",
        f"`python -m eval.grounding` (run by `make eval`): the grounding of `memory.extraction.grounding` "
        f"(words an entry may reword: {PARAPHRASE_MISSING_SHARE:.0%}) over entries a model could write from one "
        f"customer message (in a wider language: {WIDER_PARAPHRASE_MISSING_SHARE:.0%}, decision 0021). "
        "`tune.jsonl` (en de ru cs es fr) is the file that share was chosen on. `heldout.jsonl` (pl it pt nl sv "
        "en, written separately) was read for which languages may be reworded and, on 2026-12-02, the wider "
        "languages' share and clause-opening rule were chosen on it and on train_a.jsonl's Hungarian: its figures "
        "are development figures. `verbatim` is the space setting `admit_rewrites` off (the grounding before #26). "
        "`train_a.jsonl` (1,440 pairs in en de ru cs es fr ja hu, written as training data for a learned check) "
        "was read while number words and resolved dates were built (decision 0024): its figures are training "
        "figures. `heldout_fresh.jsonl` (200 pairs in ro nb sk uk tr, written 2026-12-02 by a hand that never "
        "read the grounding code) is the untouched split: before the wider languages it admitted 11 of 100 "
        "faithful rewrites and 0 near misses; it was scored twice while they were added (44 and 12 of 100 at the "
        "first version; then once more after the clause-opening rule, written from heldout.jsonl's cases of a "
        "failure its first score had also shown); on 2026-12-03 once more, after negation scope, clause mixing "
        "and the reported-speech check (decision 0026) had been built on the other files; on 2026-12-04, after "
        "the customer as subject, and on 2026-12-05, after titles from the customer's other messages (both built "
        "on train_a.jsonl's refusals). Nothing was tuned on its cases.",
        "",
        "| file | grounding | faithful admitted (recall) | fabrications admitted | precision |",
        "|---|---|---|---|---|",
    ]
    scored = {}
    files = (
        ("tune.jsonl", BOTH),
        ("heldout.jsonl", BOTH),
        ("heldout_fresh.jsonl", BOTH),
        ("train_a.jsonl", REWRITES_ONLY),
    )
    for name, settings in files:
        rows = load(name)
        for admit, label in settings:
            by = score(rows, verdicts(rows, admit_rewrites=admit))
            total = by["all"]["all"]
            lines.append(
                f"| {name} | {label} | {total.faithful_admitted} / {total.faithful} ({pct(total.recall)}) | "
                f"{total.fabricated_admitted} / {total.fabricated} | {pct(total.precision)} |"
            )
        scored[name] = by
    for name, scores in scored.items():
        lines += ["", f"{name}, faithful rewrites admitted:", "", "| by | admitted | recall |", "|---|---|---|"]
        lines += _rows_of(scores["lang"], True) + _rows_of(scores["change"], True)
        lines += ["", f"{name}, fabrications admitted (target 0):", "", "| by | admitted | share |", "|---|---|---|"]
        lines += _rows_of(scores["lang"], False) + _rows_of(scores["change"], False)
    return lines


def locomo_rows() -> list[dict]:
    """LoCoMo's model-written observations that cite the speaker's own turns, as rows to ground: the entry
    cites the first such turn whole (a model extracting from that message), the speaker's other turns of the
    session are the conversation. Read at run time from ../shared/data (CC BY-NC, evaluation only)."""
    from eval.locomo_data import DATA, dia_ids, sessions

    if not DATA.exists():
        return []
    rows = []
    for sample in json.loads(DATA.read_text()):
        by_session = {n: (started, turns) for n, started, turns in sessions(sample["conversation"])}
        texts = {t["dia_id"]: (n, t["speaker"], t["text"]) for n, (_s, turns) in by_session.items() for t in turns}
        for per_speaker in sample["observation"].values():
            for speaker, observations in per_speaker.items():
                for text, evidence in observations:
                    cited = dia_ids(evidence if isinstance(evidence, str) else ";".join(evidence))
                    own = [d for d in cited if d in texts and texts[d][1] == speaker]
                    if not own:
                        continue
                    number, _speaker, message = texts[own[0]]
                    started, turns = by_session[number]
                    others = [t["text"] for t in turns if t["speaker"] == speaker and t["text"] != message]
                    rows.append({
                        "customer": speaker, "sent_at": started.date().isoformat(), "message": message,
                        "other_messages": others,
                        "quote": message, "entry": text, "label": "supported",
                        "change": f"{sample['sample_id']} {speaker}", "lang": "en",
                    })  # fmt: skip
    return rows


def locomo_lines() -> list[str]:
    rows = locomo_rows()
    if not rows:
        return ["", "LoCoMo observations: skipped (../shared/data/locomo-dev not found)."]
    reasons = verdicts(rows)
    scores = score(rows, reasons)
    total = scores["all"]["all"]
    why = collections.Counter(r.split(":")[0].split(" (")[0] for r in reasons if r)
    lines = [
        "",
        f"LoCoMo's own model-written observations citing the speaker's turns (a strong model's rewrites of a real "
        f"conversation; issue target 90 %): **{total.faithful_admitted} of {total.faithful} admitted "
        f"({pct(total.recall)})**. Not every observation is supported by the turn it cites (some add what an "
        "image or another turn showed); nobody labelled which.",
        "",
        "| speaker | admitted |",
        "|---|---|",
    ]
    lines += [
        f"| {k} | {s.faithful_admitted} / {s.faithful} ({pct(s.recall)}) |" for k, s in sorted(scores["change"].items())
    ]
    lines += ["", "Refused, by reason: " + "; ".join(f"{reason} {count}" for reason, count in why.most_common(8)) + "."]
    return lines


def main() -> None:
    setup_django()
    if sys.argv[1:] == ["tune"]:
        tune()
        return
    lines = report() + locomo_lines()
    print("\n".join(lines))
    replace_section(lines)


if __name__ == "__main__":
    main()
