"""The calendar dates a message's time expressions stand for, from the day it was sent, in any language
``dateparser`` reads: "yesterday", "last Saturday", «на прошлой неделе», "wczoraj", "la settimana
scorsa", "three days ago".

A model that writes "Emma's machine arrived on November 11, 2025" for "arrived yesterday" (sent on the
12th) says what the customer said; grounding admits the day, month and year of that date and still refuses
any other (the 10th), and a date more precise than the customer's ("on 3 March" for "last month"). A
weekday without "last" or "next" ("on Monday") may be either side of the day it was said, so both are
read. ``dateparser`` also reads words of other kinds as dates ("We" as Wednesday, "nine days" as a day nine
days away): what it finds licenses a number only where the entry writes a date, never a count.

>>> import datetime
>>> sent = datetime.datetime(2025, 11, 12, 10, 0)
>>> dates_in("Our washing machine finally arrived yesterday.", "en", sent)
[SaidDate(phrase='yesterday', day=datetime.date(2025, 11, 11), period='day')]
>>> [d.day for d in dates_in("Wczoraj kupiłem rower.", "cs", sent, guess_language=True)]
[datetime.date(2025, 11, 11)]
>>> dates_in("We have a cat and a rabbit.", "en", sent)
[]
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import re

# Matches this short are almost always a word of another kind read as a date: "We" (Wednesday), "Vi", the
# Hungarian article "egy" (one: January). Ideographic scripts say "yesterday" in two characters.
MIN_MATCH_LETTERS = 4
_LETTER = re.compile(r"[^\W\d_]")
_IDEOGRAPHS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
# A customer speaks of their own recent past or near future: a "date" years away is a number read as one.
MAX_DAYS_AWAY = 800
# How precisely a phrase names its date ("yesterday": a day; "next month": a month; "last year": a year).
PRECISION = {"time": 0, "day": 0, "week": 1, "month": 2, "year": 3}


@dataclasses.dataclass(frozen=True)
class SaidDate:
    phrase: str
    day: datetime.date
    period: str

    @property
    def names_day(self) -> bool:
        return PRECISION[self.period] == 0

    @property
    def names_month(self) -> bool:
        return PRECISION[self.period] <= PRECISION["month"]


def dates_in(text: str, language: str, sent_at: datetime.datetime, *, guess_language: bool = False) -> list[SaidDate]:
    """The dates the time expressions in ``text`` resolve to from ``sent_at``, read in ``language``, or with
    ``guess_language`` (for a text not in a language the caller reads) in the language ``dateparser``
    guesses when that finds nothing: the guess tries every language it knows (0.5 s a text, 3 s the first)."""
    base = sent_at.replace(tzinfo=None)
    found = _search(text, language, base)
    if not found and guess_language:
        found = _search(text, None, base)
    return sorted(found, key=lambda d: (d.day, d.phrase))


def _search(text: str, language: str | None, base: datetime.datetime) -> set[SaidDate]:
    if language is not None and language not in _known_languages():
        return set()
    found = set()
    for prefer in ("past", "future"):
        matches = _phrase_matches(text, language, base, prefer) if language else []
        # dateparser's search splits "the day before yesterday" and reads its "yesterday" alone
        searched = [m for m in _matches(text, language, base, prefer) if not any(m[0] in p for p, _, _ in matches)]
        for phrase, when, period in matches + searched:
            if abs((when.date() - base.date()).days) <= MAX_DAYS_AWAY:
                found.add(SaidDate(phrase, when.date(), period))
    return found


MAX_PHRASE_WORDS = 4
_TOKEN = re.compile(r"\d+(?:[.,:/-]\d+)*\.?|[^\W\d_]+(?:[-'’][^\W\d_]+)*")


def _phrase_matches(text, language, base, prefer) -> list[tuple[str, datetime.datetime, str]]:
    """Every run of up to four words that reads as a date ("el año pasado", «в следующем месяце»):
    ``dateparser``'s own search splits such phrases and misses them."""
    from dateparser.date import DateDataParser

    parser = DateDataParser(languages=[language], settings=_settings(base, prefer))
    tokens = list(_TOKEN.finditer(text))
    found = []
    for size in range(MAX_PHRASE_WORDS, 0, -1):
        for start in range(0, len(tokens) - size + 1):
            phrase = text[tokens[start].start() : tokens[start + size - 1].end()]
            if not _may_be_a_date(phrase, language) or any(phrase in longer for longer, _, _ in found):
                continue
            try:
                data = parser.get_date_data(phrase)
            except (ValueError, OverflowError, TypeError):
                continue
            if data.date_obj is not None:
                found.append((phrase, data.date_obj, _precision(data.period)))
    return found


def _may_be_a_date(phrase: str, language: str) -> bool:
    """Whether the phrase holds a word the language's calendar vocabulary has (a month, a weekday, "year",
    "yesterday", "hace"): ``dateparser`` also reads "a cat and a" as the first of January and "four" as April."""
    if _IDEOGRAPHS.search(phrase):
        return True
    if len(_LETTER.findall(phrase)) < MIN_MATCH_LETTERS:
        return False
    vocabulary = _calendar_words(language)
    return any(word.lower() in vocabulary for word in _TOKEN.findall(phrase))


CALENDAR_KEYS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                 "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                 "year", "month", "week", "day")  # fmt: skip
MIN_CALENDAR_WORD_LETTERS = 3  # "a" (a year in Spanish), "d" (day), "mi" (Wednesday): too short to tell


@functools.cache
def _calendar_words(language: str) -> frozenset[str]:
    from dateparser.languages.loader import default_loader

    info = default_loader.get_locale(language).info
    phrases = [p for key in CALENDAR_KEYS for p in info.get(key, [])]
    phrases += [p for found in info.get("relative-type", {}).values() for p in found]
    words = {w.lower() for p in phrases for w in _TOKEN.findall(p) if not w[0].isdigit()}
    return frozenset(w for w in words if len(w) >= MIN_CALENDAR_WORD_LETTERS)


def _matches(text, language, base, prefer) -> list[tuple[str, datetime.datetime, str]]:
    from dateparser.search import search_dates  # ~0.15 s to import: only when a rewrite gives a date

    try:
        found = search_dates(
            text,
            languages=[language] if language else None,
            settings=_settings(base, prefer),
            add_detected_language=True,
        )
    except (ValueError, OverflowError, TypeError):
        return []
    return [
        (phrase, when, _period(phrase, read_as, base, prefer))
        for phrase, when, read_as in found or []
        if _may_be_a_date(phrase, read_as)
    ]


def _period(phrase: str, language: str, base: datetime.datetime, prefer: str) -> str:
    from dateparser.date import DateDataParser

    try:
        data = DateDataParser(languages=[language], settings=_settings(base, prefer)).get_date_data(phrase)
    except (ValueError, OverflowError, TypeError):
        return "day"
    return _precision(data.period)


def _precision(period: str | None) -> str:
    return period if period in PRECISION else "day"


def _settings(base: datetime.datetime, prefer: str) -> dict:
    return {"RELATIVE_BASE": base, "PREFER_DATES_FROM": prefer, "RETURN_AS_TIMEZONE_AWARE": False}


@functools.cache
def _known_languages() -> frozenset[str]:
    from dateparser.languages.loader import default_loader

    return frozenset(default_loader.get_locale_map())
