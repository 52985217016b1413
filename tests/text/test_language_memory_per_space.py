"""A space's turns detect the language of a text once while the process remembers it — never for
another space, and without keeping the text: the worker compares each new entry with the same
nearest memories turn after turn, and detection was most of a one-sentence turn's time.

Each space keeps its own answers through nested blocks, a recall of one space inside a turn of another,
threads and near-identical texts, and a dump of the process shows no text and no digest anyone could
compute (memory/text/analysis.py, ``SpaceLanguages``)."""

from __future__ import annotations

import hashlib
import threading
import unicodedata

import pytest

from memory.recall import search
from memory.text import analysis
from memory.text.analysis import SpaceLanguages, detect_language, languages_remembered
from tenants import scope
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


TEXTS = {
    "en": "Our warehouse is in Valencia.",
    "cs": "Náš sklad je ve Valencii a otevírá v osm.",
    "de": "Unser Lager ist in Valencia und öffnet um acht.",
    "ru": "Наш склад находится в Валенсии.",
    "ja": "私たちの倉庫はバレンシアにあります。",
}


def spaces_remembered() -> set[str]:
    return {space_key for space_key, _digest, _language in analysis.SPACE_LANGUAGES.entries()}


def test_after_a_nested_block_for_another_space_the_outer_space_keeps_its_own_memory(detections):
    with languages_remembered("space-1"):
        assert detect_language(TEXTS["cs"]) == "cs"
        with languages_remembered("space-2"):
            assert detect_language(TEXTS["de"]) == "de"
        # space-2's text was not remembered for space-1, in the block or across blocks.
        assert detect_language(TEXTS["de"]) == "de"
    assert detections == [TEXTS["cs"], TEXTS["de"], TEXTS["de"]]
    with languages_remembered("space-1"):
        detect_language(TEXTS["cs"])
        detect_language(TEXTS["de"])
    with languages_remembered("space-2"):
        detect_language(TEXTS["de"])
    assert len(detections) == 3


def test_a_recall_of_one_space_inside_a_turn_of_another_remembers_its_query_for_its_own_space(
    detections, space_a, space_b
):
    question = "Where is the warehouse of the Valencia office?"
    with languages_remembered(space_a.id):
        with scope.tenant_scope(space_b.tenant_id, space_b):
            search.recall(space=space_b, query=question)
        assert spaces_remembered() == {str(space_b.id)}
        detections.clear()
        detect_language(question)  # in space A: never seen there
    assert detections == [question]


def test_near_identical_texts_each_get_their_own_detection(detections):
    # Texts that normalise, print or encode alike must not share a remembered answer.
    composed = "Café in Nîmes opens at eight."
    variants = [
        composed,
        unicodedata.normalize("NFD", composed),
        composed + " ",
        composed.replace(" ", "\u200b "),
        composed.upper(),
        "Наш склад \ud800 в Валенсии.",  # a lone surrogate (JSON lets a client send one)
        "Наш склад \ud83d\ude00 в Валенсии.",  # a surrogate pair that is not the emoji's code point
        "Наш склад 😀 в Валенсии.",
        *TEXTS.values(),
    ]
    digests = {analysis.SPACE_LANGUAGES.key_for("space-1", text) for text in variants}
    assert len(digests) == len(variants)
    expected = [analysis.detect_language_afresh(text) for text in variants]
    detections.clear()
    for _ in range(2):
        with languages_remembered("space-1"):
            assert [detect_language(text) for text in variants] == expected
    assert detections == variants  # each detected once, in the first block


def test_threads_detecting_in_their_own_spaces_each_keep_their_own_answers(detections):
    failures: list[BaseException] = []

    def turn_of(space_key: str):
        try:
            for _ in range(5):
                with languages_remembered(space_key):
                    for language, text in TEXTS.items():
                        assert detect_language(text) == language
        except BaseException as exc:  # reported below
            failures.append(exc)

    workers = [threading.Thread(target=turn_of, args=(f"space-{n}",)) for n in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert not failures
    # Each space detected each text once, however the threads interleaved.
    assert len(detections) == 6 * len(TEXTS)
    assert len(analysis.SPACE_LANGUAGES) == 6 * len(TEXTS)


def test_a_thread_started_inside_a_block_does_not_remember_for_that_space(detections):
    with languages_remembered("space-1"):
        thread = threading.Thread(target=detect_language, args=(TEXTS["ru"],))
        thread.start()
        thread.join()
    assert len(analysis.SPACE_LANGUAGES) == 0


def test_after_a_turn_the_process_keeps_no_text_and_no_digest_anyone_could_compute(detections, space_a):
    said = "Our warehouse in Valencia opens at eight on weekdays."
    assert work(space_a, queued(space_a, said)) == "done"
    assert not analysis.remembering_languages()  # the turn's own texts went with its block
    entries = analysis.SPACE_LANGUAGES.entries()
    assert entries and {space_key for space_key, _, _ in entries} == {str(space_a.id)}
    unkeyed = {hashlib.blake2b(text.encode(), digest_size=16).digest() for text in detections}
    for _space_key, digest, _language in entries:
        assert len(digest) == 16 and digest not in unkeyed
        assert b"Valencia" not in digest and b"warehouse" not in digest
