"""The language data is loaded in its low-memory form and answers exactly as the default form does.

simplemma's default dictionaries cost about 450 MiB per process; the low-memory backend keeps the same
entries packed (see memory/text/analysis.py). Every word and text of the labelled evaluation set must
get the same lemma in every language and the same detected language from both.
"""

from __future__ import annotations

import json
from pathlib import Path

import simplemma
from simplemma.strategies.dictionaries import DefaultDictionaryFactory

from memory.text import analysis

EVAL_DATA = Path(__file__).resolve().parents[2] / "eval" / "data"


def strings_in(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings_in(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []


def eval_texts() -> list[str]:
    texts = []
    for path in sorted(EVAL_DATA.iterdir()):
        if path.suffix == ".json":
            texts += strings_in(json.loads(path.read_text()))
        elif path.suffix == ".jsonl":
            texts += [s for line in path.read_text().splitlines() if line.strip() for s in strings_in(json.loads(line))]
    return sorted({t for t in texts if len(t) > 3})


def test_text_analysis_never_loads_the_default_dictionaries(monkeypatch):
    asked: list[str] = []
    default_lookup = DefaultDictionaryFactory.get_dictionary

    def recorded(factory, lang):
        asked.append(lang)
        return default_lookup(factory, lang)

    monkeypatch.setattr(DefaultDictionaryFactory, "get_dictionary", recorded)
    for language, text in {"en": "We run four vans.", "ru": "У нас четыре фургона.", "cs": "Máme dodávky."}.items():
        analysis.LEMMAS.clear()
        assert analysis.detect_language(text) == language
        assert analysis.content_terms(text, language)
    assert asked == []


def test_low_memory_dictionaries_give_the_same_lemmas_and_languages_on_the_eval_set():
    texts = eval_texts()
    assert len(texts) > 500  # the whole labelled set, in all its languages
    words = sorted({w for text in texts for w in analysis.words(text)})
    latin = analysis.LATIN_LANGUAGES
    for text in texts:
        packed = simplemma.langdetect(text, lang=latin, low_memory=True)
        unpacked = simplemma.langdetect(text, lang=latin, low_memory=False)
        assert packed == unpacked, text
    for language in analysis.STOP_WORD_LISTS:
        different = [
            w
            for w in words
            if simplemma.lemmatize(w, lang=language, low_memory=True)
            != simplemma.lemmatize(w, lang=language, low_memory=False)
        ]
        assert different == [], (language, different[:10])


def test_remembered_dictionary_lookups_detect_the_same_languages_as_simplemma_on_the_eval_set():
    """``language_shares`` remembers which words each dictionary holds; asked cold and then from memory, it
    must score every text exactly as simplemma's own detection does."""
    texts = eval_texts()
    analysis.KNOWN_WORDS.clear()
    expected = [simplemma.langdetect(text, lang=analysis.LATIN_LANGUAGES, low_memory=True) for text in texts]
    for _ in range(2):
        different = [t for t, shares in zip(texts, expected, strict=True) if analysis.language_shares(t) != shares]
        assert different == []
    assert len(analysis.KNOWN_WORDS) > 1000
    assert all(isinstance(key, bytes) for key, _ in analysis.KNOWN_WORDS.entries())  # digests, never the words
