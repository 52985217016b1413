"""A turn reads a one-sentence message three times (as the message, its sentence, its entry) and asks for the
same words' lemmas hundreds of times: the learned reading of a text and a word's lemma are worked out once per
turn or recall, and nothing of them outlives the block."""

from __future__ import annotations

import uuid

from memory.text import analysis
from memory.text.analysis import languages_remembered, read_in_block
from memory.understanding import readings


def counting_features(monkeypatch) -> list[list[str]]:
    asked: list[list[str]] = []
    computed = readings.feature_matrix

    def counted(texts, *, cache_scope=None):
        asked.append(list(texts))
        return computed(texts, cache_scope=cache_scope)

    monkeypatch.setattr(readings, "feature_matrix", counted)
    return asked


def test_within_one_turn_a_text_is_read_once_and_reads_the_same(monkeypatch):
    asked = counting_features(monkeypatch)
    with languages_remembered(uuid.uuid4()):
        first = readings.read(["We run four vans.", "Forget my address."])
        again = readings.read(["Forget my address.", "We run four vans.", "Bydlím v Brně."])
        assert again[:2] == first[::-1]
    assert asked == [["We run four vans.", "Forget my address."], ["Bydlím v Brně."]]
    assert again[0].intent == "forget" and again[1].intent == "statement"


def test_nothing_is_remembered_outside_a_turn_or_between_turns(monkeypatch):
    asked = counting_features(monkeypatch)
    readings.read(["We run four vans."])
    readings.read(["We run four vans."])
    space = uuid.uuid4()
    for _ in range(2):
        with languages_remembered(space):
            readings.read(["We run four vans."])
    assert len(asked) == 4
    assert read_in_block("reading") is None


def test_a_reading_asked_for_another_space_is_not_taken_from_this_turns_memo(monkeypatch):
    asked = counting_features(monkeypatch)
    with languages_remembered(uuid.uuid4()):
        readings.read(["We run four vans."])
        readings.read(["We run four vans."], cache_scope=str(uuid.uuid4()))
    assert len(asked) == 2


def test_within_one_turn_a_words_lemma_is_looked_up_once(monkeypatch):
    looked_up: list[tuple[str, str]] = []
    remembered = analysis.LEMMAS.lemma

    def counted(word, language, lookup):
        looked_up.append((word, language))
        return remembered(word, language, lookup)

    monkeypatch.setattr(analysis.LEMMAS, "lemma", counted)
    with languages_remembered(uuid.uuid4()):
        first = [analysis.lemma("vans", "en") for _ in range(5)] + [analysis.lemma("vans", "fr")]
    after = analysis.lemma("vans", "en")
    assert first[:5] == ["van"] * 5 and after == "van"
    assert looked_up == [("vans", "en"), ("vans", "fr"), ("vans", "en")]
