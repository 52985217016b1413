"""The rules the evaluation calibrated (docs/quality.md), each on cases from its labelled set, plus
a check that the labelled set itself is complete."""

import json
from collections import Counter
from pathlib import Path

import pytest

from memory.dedup.merge_rule import is_restatement, same_terms
from memory.forgetting.judge import read_intent
from tests.support.recall import recall, tell

DATA = Path(__file__).resolve().parents[2] / "eval" / "data"


def test_the_labelled_set_has_300_items_in_five_languages_with_cross_language_cases():
    items = [json.loads(line) for name in ("dedup", "recall", "forget", "extraction")
             for line in (DATA / f"{name}.jsonl").read_text().splitlines() if line.strip()]  # fmt: skip
    assert len(items) >= 300
    languages = Counter(item["lang"] for item in items)
    assert {"en", "ru", "ja", "cs", "es", "cross"} <= set(languages)
    assert len({item["id"] for item in items}) == len(items)


@pytest.mark.parametrize(
    "a, b, merges",
    [
        ("Our busiest season is December.", "December is our busiest season.", True),
        ("Nuestra temporada más fuerte es diciembre.", "Diciembre es nuestra temporada más fuerte.", True),
        ("We ship to Germany.", "We ship from Germany.", False),
        ("Our budget is 5000 EUR per month.", "Our budget is 5000 EUR per year.", False),
        ("Бюджет — 300 тысяч рублей в месяц.", "Бюджет — 300 тысяч рублей в год.", False),
        ("We have four vehicles.", "We have four drivers.", False),
        ("Our office is in Brno.", "Our warehouse is in Brno.", False),
    ],
)
def test_dedup_merges_restatements_in_the_same_terms_only(a, b, merges):
    assert same_terms(a, b) is merges
    assert is_restatement(a, b, 0.02, dedup_distance=0.07, requires_same_terms=True) is merges
    # Switched off, distance decides alone: at this distance the minimal pairs merge too.
    assert is_restatement(a, b, 0.02, dedup_distance=0.07, requires_same_terms=False) is True


@pytest.mark.parametrize(
    "utterance, kind",
    [
        ("Don't forget our renewal is in June.", None),
        ("Не забудьте, что продление договора в июне.", None),
        ("請求書を送るのを忘れてしまいました、すみません。", None),
        ("I forgot to send you the invoice, sorry.", None),
        ("Forget my contact preference.", "explicit"),
        ("Delete the note about where to send invoices.", "explicit"),
        ("私の連絡方法の希望は忘れてください。", "explicit"),
    ],
)
def test_look_alikes_are_not_forget_requests(utterance, kind):
    assert read_intent(utterance).kind == kind


@pytest.mark.django_db
def test_an_unrelated_question_gets_nothing_though_every_row_is_within_the_outer_bound(client_a, space_a):
    tell(client_a, space_a, "Our accounting runs on SAP.", "We have 40 employees.", "Please contact me by email.")
    assert recall(client_a, space_a, "Do they have a cat?")["memories"] == []
    assert recall(client_a, space_a, "What is their favourite football team?")["memories"] == []
    # The same rows come back for a question that shares a word with one of them.
    found = recall(client_a, space_a, "Which accounting software do they use?")["memories"]
    assert [m["content"] for m in found][:1] == ["Our accounting runs on SAP."]
