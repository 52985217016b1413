"""Number words of every language ``num2words`` writes, read back as digits: "forty", "czterdzieści",
"quaranta", "veertig" and "40" are one value.

Grounding refuses an entry that adds a number the customer did not say ("about fifteen people" →
"about fifty people"); a table of our own stopped at twelve in six languages, so a changed number
written as a word went through in every other case. The table is built once, from ``num2words``'
cardinals (and ordinals from "third" on) for 0–100 and the round hundreds, thousand and million.

A word that is a number in one language and a common word in another ("on" is ten in Turkish, "min"
a thousand in Azerbaijani, "to" two in Norwegian) is left out: it would read an English or Swedish
sentence as holding a number. So are words for one (they are articles: "un", "ein", "jeden") and
first and second ("a second opinion"), and languages written without spaces between words (Japanese,
Chinese, Thai, and Korean, whose numerals are also common syllables: "일" is "one" and "work").

>>> number_word_value("forty"), number_word_value("czterdzieści"), number_word_value("veertig")
('40', '40', '40')
>>> number_word_value("quarantadue"), number_word_value("vingt"), number_word_value("one")
('42', '20', None)
>>> number_word_value("on"), number_word_value("to")
(None, None)
"""

from __future__ import annotations

import collections
import functools
import os
import re

from num2words import CONVERTER_CLASSES, num2words
from stop_words import AVAILABLE_LANGUAGES, LANGUAGE_MAPPING, get_stop_words

WITHOUT_SPACES = frozenset({"ja", "zh", "th", "ko"})
VALUES = (*range(0, 101), 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1_000_000)
ROUND = (100, 1000, 1_000_000)  # "one hundred": the word besides "one" is the hundred
ORDINALS_FROM = 3
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")


def number_word_value(word: str, language: str | None = None) -> str | None:
    """The digits a lower-case word stands for, or None when it is no number word (or an ambiguous one).
    In a text known to be in ``language`` its own number words count even where another language has
    the word too (Spanish "dos" is also Portuguese "of the")."""
    if language is not None and language in _languages():
        value = _number_words((language,)).get(word)
        if value is not None:
            return value
    return _number_words().get(word)


@functools.cache
def _number_words(languages: tuple[str, ...] | None = None) -> dict[str, str]:
    values: dict[str, set[int]] = collections.defaultdict(set)
    languages_of: dict[str, set[str]] = collections.defaultdict(set)
    ones: set[str] = set()
    for language in languages or _languages():
        for value in VALUES:
            for form in ("cardinal", "ordinal") if value >= ORDINALS_FROM else ("cardinal",):
                written = _written(value, language, form)
                if written is None:
                    continue
                parts = _WORD.findall(written)
                if value == 1:
                    ones.update(parts)
                    continue
                if len(parts) == 1:
                    values[parts[0]].add(value)
                    languages_of[parts[0]].add(language)
                elif value in ROUND:
                    for part in parts[1:]:  # "one hundred", "jeden tysiąc": the round word
                        values[part].add(value)
                        languages_of[part].add(language)
        for value, word in _round_words(language):
            values[word].add(value)
            languages_of[word].add(language)
    other_words = _common_words_by_language()
    table = {}
    for word, found in values.items():
        if len(found) != 1 or word in ones or len(word) < 2:
            continue  # a word for two values (in two languages), or an article
        if languages is None and any(
            word in words for language, words in other_words.items() if language not in languages_of[word]
        ):
            continue  # a common word of another language
        table[word] = str(found.pop())
    return table


def _round_words(language: str) -> list[tuple[int, str]]:
    """The word for a hundred or a thousand that a language writes inside one word with its count
    ("einhundert", "zweihundert" → "hundert"; "etttusen", "tvåtusen" → "tusen"): the ending all nine share."""
    found = []
    for value in (100, 1000):
        forms = [_written(value * count, language) for count in range(1, 10)]
        if any(form is None or len(_WORD.findall(form)) != 1 for form in forms):
            continue
        ending = os.path.commonprefix([form[::-1] for form in forms])[::-1]
        if len(ending) >= MIN_ROUND_WORD_LETTERS and _WORD.fullmatch(ending):
            found.append((value, ending))
    return found


MIN_ROUND_WORD_LETTERS = 4


def _written(value: int, language: str, form: str = "cardinal") -> str | None:
    """``num2words``' words for a value, lower case; None where the language has no such form (its converters
    raise NotImplementedError for a form they lack, and other errors for values they cannot write)."""
    try:
        return num2words(value, lang=language, to=form).lower()
    except (NotImplementedError, OverflowError, TypeError, ValueError, AttributeError, KeyError):
        return None


@functools.cache
def _languages() -> tuple[str, ...]:
    return tuple(
        sorted(language for language in CONVERTER_CLASSES if "_" not in language and language not in WITHOUT_SPACES)
    )


def _common_words_by_language() -> dict[str, frozenset[str]]:
    """Each language's stop words (the ``stop-words`` lists), by the code ``num2words`` uses."""
    by_language = {}
    for name in AVAILABLE_LANGUAGES:
        code = next((c for c, n in LANGUAGE_MAPPING.items() if n == name), name)
        by_language[code] = frozenset(w.lower() for w in get_stop_words(name))
    return by_language
