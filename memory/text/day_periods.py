"""The parts of a day a text names ("odpoledne", "abends", «вечером», "du soir" → evening), in any language
the Unicode CLDR names them in, from Babel's copy of its data: a time of day is a value of a fact ("on
Thursday evening" is not "on Thursday afternoon"), as a month or weekday is.

>>> sorted(day_periods("Kommen Sie bitte Donnerstag abends vorbei.", "de"))
['evening']
>>> sorted(day_periods("Přijďte ve čtvrtek odpoledne.", "cs"))
['afternoon']
>>> day_periods("We deliver on Thursdays.", "en")
set()
"""

from __future__ import annotations

import functools

from memory.text.analysis import lemma, words


@functools.lru_cache(maxsize=64)
def day_period_names(language: str) -> dict[str, str]:
    """A language's one-word names of the parts of a day, each to its period ("morning", "afternoon",
    "evening", "night", "noon", "midnight"). CLDR's narrow forms ("n", "r") and abbreviations ("odp.") are
    letters of other words and are left out; so are "am" and "pm"."""
    from babel import Locale, UnknownLocaleError

    try:
        contexts = Locale.parse(language).day_periods
    except (UnknownLocaleError, ValueError, TypeError):
        return {}
    names: dict[str, str] = {}
    for context in contexts.values():
        for width in ("wide", "abbreviated"):
            for key, name in context.get(width, {}).items():
                name = name.lower()
                if key not in ("am", "pm") and name.isalpha() and len(name) >= 3:
                    names.setdefault(name, key.rstrip("0123456789"))  # "morning1", "morning2": both mornings
    return names


def day_periods(text: str, language: str) -> set[str]:
    """The parts of a day ``text`` names, a word or its lemma at a time."""
    names = day_period_names(language)
    if not names:
        return set()
    found = set()
    for word in words(text):
        for form in (word, lemma(word, language)):
            if form in names:
                found.add(names[form])
    return found
