"""A space's turns detect the language of a text once while the process remembers it — never for
another space, and without keeping the text: the worker compares each new entry with the same
nearest memories turn after turn, and detection was most of a one-sentence turn's time."""

from __future__ import annotations

import pytest

from memory.text import analysis
from memory.text.analysis import SpaceLanguages, detect_language, languages_remembered
from tests.support.worker import queued, work

pytestmark = pytest.mark.django_db

TEXT = "Our warehouse is in Valencia."


def test_a_space_detects_a_texts_language_once_across_its_turns(detections):
    for _ in range(3):
        with languages_remembered("space-1"):
            assert detect_language(TEXT) == "en"
    assert detections == [TEXT]


def test_another_space_detects_it_again(detections):
    with languages_remembered("space-1"):
        detect_language(TEXT)
    with languages_remembered("space-2"):
        assert detect_language(TEXT) == "en"
    assert detections == [TEXT, TEXT]


def test_without_a_space_nothing_is_remembered_after_the_block(detections):
    for _ in range(2):
        with languages_remembered():
            detect_language(TEXT)
            detect_language(TEXT)
    assert detections == [TEXT, TEXT]
    assert len(analysis.SPACE_LANGUAGES) == 0


def test_a_block_for_another_space_inside_one_does_not_read_the_outer_spaces_memory(detections):
    with languages_remembered("space-1"):
        detect_language(TEXT)
        with languages_remembered("space-2"):
            detect_language(TEXT)
    assert detections == [TEXT, TEXT]


def test_what_is_kept_holds_no_customer_text(detections):
    with languages_remembered("space-1"):
        detect_language(TEXT)
    entries = analysis.SPACE_LANGUAGES.entries()
    assert len(entries) == 1
    space_key, digest, _language = entries[0]
    assert space_key == "space-1"
    assert isinstance(digest, bytes) and len(digest) == 16
    assert TEXT.encode() not in digest and b"Valencia" not in digest


def test_the_memory_is_bounded():
    languages = SpaceLanguages(max_entries=5)
    for number in range(20):
        languages.put("space-1", f"We have {number} vans.", "en")
    assert len(languages) == 5
    assert languages.get("space-1", "We have 19 vans.") == "en"
    assert languages.get("space-1", "We have 0 vans.") is None


def test_the_worker_does_not_detect_again_the_memories_it_read_in_earlier_turns(space_a, space_b, detections):
    said = ["Our warehouse is in Lyon.", "We close the shop on Mondays.", "Our warehouse is in Valencia."]
    for index, text in enumerate(said):
        assert work(space_a, queued(space_a, text, session_id=f"s{index}")) == "done"
    detections.clear()

    assert work(space_a, queued(space_a, "Our warehouse is in Porto.", session_id="s9")) == "done"
    # Only the new turn's own texts (its sentence, entry and topic); the stored memories it compared
    # with were read, and detected, in the turns before.
    assert not set(said) & set(detections)

    # The same memories in another tenant's space: detected there afresh.
    for index, text in enumerate(said):
        assert work(space_b, queued(space_b, text, session_id=f"s{index}")) == "done"
    assert set(said) <= set(detections)
