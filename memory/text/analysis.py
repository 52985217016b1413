"""Language-aware text handling shared by extraction, grounding, dedup and the blind index.

Languages with spaces are tokenised, lower-cased and lemmatised with simplemma, and stop words
come from the ``stop-words`` lists; Japanese, Chinese and Korean text, which has no spaces, is
handled as character bigrams.

>>> content_terms("Our renewal is in May", "en")
['renewal', 'may']
>>> detect_language("私たちは毎週月曜日に配送します")
'ja'
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import os
import re
import threading
import unicodedata
from collections import OrderedDict
from functools import lru_cache

import simplemma
from simplemma.strategies import DefaultStrategy, LemmatizationStrategy
from stop_words import get_stop_words

from memory.text.text_keys import text_key

# simplemma's default backend unpacks each language's dictionary into a Python dict (about 55 MiB per
# Latin language, 170 MiB for Russian, per process); the low-memory one keeps the same entries as one
# front-coded byte string per language with a sparse index (about 10 MiB each), and returns the same
# lemmas (tests/text/test_language_data.py). ``lemma`` below caches the lookups it makes slower.
LOW_MEMORY_DICTIONARIES = True

LATIN_LANGUAGES = ("en", "cs", "de", "es", "fr")
SUPPORTED_LANGUAGES = (*LATIN_LANGUAGES, "ru", "ja")
STOP_WORD_LISTS = {"en": "english", "cs": "czech", "de": "german", "es": "spanish", "fr": "french", "ru": "russian"}
# Languages read only where a caller names them (``detect_language`` chooses among the six above): each has a
# stop-word list (``stop-words``) and a lemmatiser dictionary (simplemma), in the Latin or Cyrillic script.
# Grounding reads a customer's rewritten words in them (memory.extraction.grounding.wider_language).
WIDER_STOP_WORD_LISTS = {
    "bg": "bulgarian", "ca": "catalan", "da": "danish", "fi": "finnish", "hu": "hungarian", "id": "indonesian",
    "it": "italian", "ms": "malaysian", "nb": "norwegian", "nl": "dutch", "pl": "polish", "pt": "portuguese",
    "ro": "romanian", "sk": "slovak", "sv": "swedish", "tr": "turkish", "uk": "ukrainian",
}  # fmt: skip
LEMMATISED_LANGUAGES = {**STOP_WORD_LISTS, **WIDER_STOP_WORD_LISTS}
CYRILLIC_WIDER = frozenset({"bg", "uk"})

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)
# Inside a sentence, what parts a clause weakly: a comma or colon that is not a number's own ("4,000", "10:30"), a
# bracket, a quote mark or a dash (also a hyphen typed as one, spaced: "not just a hobby - it helps me").
WEAK_CLAUSE_BREAK = r",(?!\d)|:(?!\d)|\s-\s|[、，：()（）\"“”«»„「」『』—–]"
_SENTENCE_END_CJK = re.compile(r"(?<=[。！？!?])")
_JA_PARTICLES = set("はがをにでとものへやかねよ")

# Month and weekday names by number, as lemmas of each language we read (en, ru, cs, de, es, fr): grounding
# gives the date a relative time resolves to in any of them.
MONTH_NAMES = (
    ("january", "январь", "leden", "januar", "enero", "janvier"),
    ("february", "февраль", "únor", "februar", "febrero", "février"),
    ("march", "март", "březen", "märz", "marzo", "mars"),
    ("april", "апрель", "duben", "abril", "avril"),
    ("may", "май", "květen", "mai", "mayo"),
    ("june", "июнь", "červen", "juni", "junio", "juin"),
    ("july", "июль", "červenec", "juli", "julio", "juillet"),
    ("august", "август", "srpen", "agosto", "août"),
    ("september", "сентябрь", "září", "septiembre", "septembre"),
    ("october", "октябрь", "říjen", "oktober", "octubre", "octobre"),
    ("november", "ноябрь", "listopad", "noviembre", "novembre"),
    ("december", "декабрь", "prosinec", "dezember", "diciembre", "décembre"),
)
WEEKDAY_NAMES = (
    ("monday", "понедельник", "pondělí", "montag", "lunes", "lundi"),
    ("tuesday", "вторник", "úterý", "dienstag", "martes", "mardi"),
    ("wednesday", "среда", "středa", "mittwoch", "miércoles", "mercredi"),
    ("thursday", "четверг", "čtvrtek", "donnerstag", "jueves", "jeudi"),
    ("friday", "пятница", "pátek", "freitag", "viernes", "vendredi"),
    ("saturday", "суббота", "sobota", "samstag", "sábado", "samedi"),
    ("sunday", "воскресенье", "neděle", "sonntag", "domingo", "dimanche"),
)
# Words that carry a value: two statements differing only in these say different things.
MONTHS = frozenset(name for names in MONTH_NAMES for name in names)
WEEKDAYS = frozenset(name for names in WEEKDAY_NAMES for name in names)
NUMBER_WORDS = {
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "один", "два", "три", "четыре", "пять", "шесть", "jeden", "dva", "tři", "čtyři", "pět", "šest",
    "eins", "zwei", "drei", "vier", "fünf", "sechs", "uno", "dos", "tres", "cuatro", "cinco", "seis",
    "un", "deux", "trois", "quatre", "cinq",
}  # fmt: skip


MODEL_TEXT_CHARS = 2000
MODEL_WORD_CHARS = 64
_LONG_WORD = re.compile(rf"\S{{{MODEL_WORD_CHARS + 1},}}")


def bounded(text: str, max_chars: int = MODEL_TEXT_CHARS) -> str:
    """Text cut to what a model can use: words of at most 64 characters, at most ``max_chars`` in all.

    Tokenisers and language detectors slow down badly on pathological input (a 30,000-character
    "word" took over 20 s to embed); multilingual-e5-small reads 512 tokens at most anyway.

    >>> len(bounded("x" * 30000))
    64
    """
    return _LONG_WORD.sub(lambda m: m.group(0)[:MODEL_WORD_CHARS], text[: max_chars * 4])[:max_chars]


def normalise(text: str) -> str:
    """NFKC, lower case, collapsed white space: the form every comparison uses."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().lower()


def is_cjk(text: str) -> bool:
    cjk = len(_CJK.findall(text))
    return cjk > 0 and cjk >= len(re.findall(r"[A-Za-z\u00c0-\u024f\u0400-\u04ff]", text)) / 3


class BoundedMemo:
    """A bounded map for the process-wide memories below, least recently used out, safe across threads. Its
    users keep keyed digests as keys (memory/text/text_keys.py), never a text."""

    def __init__(self, max_entries: int):
        self.max_entries = max_entries
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def items(self) -> list[tuple]:
        """Oldest first."""
        with self._lock:
            return list(self._entries.items())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class SpaceLanguages:
    """The languages of texts one space's turns and recalls have read, kept across them (bounded).

    The worker compares each new entry with the space's nearest memories, the same ones turn after
    turn, and detecting a text's language costs about a millisecond: most of a one-sentence turn's
    time went to detecting the languages of memories it had read before. Kept per space, never across
    spaces: a cache shared by tenants would answer faster for a text another tenant sent, and
    response time would tell. Keys are keyed digests, not the texts (memory/text/text_keys.py)."""

    def __init__(self, max_entries: int):
        self._languages = BoundedMemo(max_entries)

    @property
    def max_entries(self) -> int:
        return self._languages.max_entries

    def key_for(self, space_key: str, text: str) -> tuple[str, bytes]:
        """What ``text`` is remembered under in a space: the space and a keyed digest of the text."""
        return space_key, text_key(text)

    def get(self, space_key: str, text: str) -> str | None:
        return self._languages.get(self.key_for(space_key, text))

    def put(self, space_key: str, text: str, language: str) -> None:
        self._languages.put(self.key_for(space_key, text), language)

    def entries(self) -> list[tuple[str, bytes, str]]:
        """What is remembered, oldest first: (space key, keyed digest of the text, language) — never a text."""
        return [(space_key, digest, language) for (space_key, digest), language in self._languages.items()]

    def __len__(self) -> int:
        return len(self._languages)


SPACE_LANGUAGES = SpaceLanguages(max_entries=20_000)


@dataclasses.dataclass(frozen=True)
class _Remembered:
    space_key: str | None
    seen: dict[str, str]
    # What is worked out of a text once per block (``read_in_block``), by (what for, the text).
    read: dict[tuple[str, str], object] = dataclasses.field(default_factory=dict)


_languages_seen: contextvars.ContextVar[_Remembered | None] = contextvars.ContextVar("languages_seen", default=None)


@contextlib.contextmanager
def languages_remembered(space_id=None):
    """Within the block, each distinct text's language is detected once; with a space, once while the
    process remembers it (``SpaceLanguages``).

    One turn reads the same few texts (its message, sentences, entries and their nearest memories)
    dozens of times. Without a space, what is remembered ends with the block."""
    space_key = str(space_id) if space_id is not None else None
    outer = _languages_seen.get()
    if outer is not None and outer.space_key == space_key:
        yield
        return
    token = _languages_seen.set(_Remembered(space_key, {}))
    try:
        yield
    finally:
        _languages_seen.reset(token)


def remembering_languages() -> bool:
    """Whether this context is inside a ``languages_remembered`` block."""
    return _languages_seen.get() is not None


def remembered_space_key() -> str | None:
    """The space whose turn or recall is running (``languages_remembered``), as a cache scope; None outside one."""
    remembered = _languages_seen.get()
    return remembered.space_key if remembered is not None else None


def read_in_block(purpose: str) -> dict[tuple[str, str], object] | None:
    """Inside a ``languages_remembered`` block (one turn or recall), a memo where ``purpose`` keeps what it read
    of a text, keyed ``(purpose, text)``, for the block only: a one-sentence message is read as the message,
    its sentence and its entry. None outside a block."""
    remembered = _languages_seen.get()
    return remembered.read if remembered is not None else None


def once_in_block(purpose: str, text: str, work_out):
    """``work_out()``, once per ``(purpose, text)`` inside a ``languages_remembered`` block; every time outside."""
    memo = read_in_block(purpose)
    if memo is None:
        return work_out()
    key = (purpose, text)
    if key not in memo:
        memo[key] = work_out()
    return memo[key]


def languages_remembered_in_space(function):
    """``languages_remembered`` for a function called with a ``space`` keyword (a turn, a recall)."""

    @functools.wraps(function)
    def remembering(*args, space, **kwargs):
        with languages_remembered(space.id):
            return function(*args, space=space, **kwargs)

    return remembering


def detect_language(text: str) -> str:
    remembered = _languages_seen.get()
    if remembered is None:
        return detect_language_afresh(text)
    language = remembered.seen.get(text)
    if language is None:
        if remembered.space_key is not None:
            language = SPACE_LANGUAGES.get(remembered.space_key, text)
        if language is None:
            language = detect_language_afresh(text)
            if remembered.space_key is not None:
                SPACE_LANGUAGES.put(remembered.space_key, text, language)
        remembered.seen[text] = language
    return language


SURE_LANGUAGE_SHARE = 0.75


def language_if_sure(text: str) -> str | None:
    """The language of ``text`` when its script or most of its words say it, ahead of every other; None when
    the dictionaries barely know its words (a language they do not hold: Italian, Polish, Turkish…) or two
    languages tie ("Vivo en Madrid." is Spanish and German word by word).

    >>> language_if_sure("Bydlím v Brně."), language_if_sure("Il mio numero d'ordine è IT-14726.")
    ('cs', None)
    """
    # A recall asks it of its query more than once.
    return once_in_block("language_if_sure", text, lambda: _language_if_sure_afresh(text))


def _language_if_sure_afresh(text: str) -> str | None:
    text = bounded(text, 1000)
    if _KANA.search(text) or _HANGUL.search(text) or is_cjk(text) or _CYRILLIC.search(text):
        return detect_language_afresh(text)
    scores = language_shares(text)
    (best, share), (_runner_up, runner_up_share) = scores[0], scores[1] if len(scores) > 1 else ("", 0.0)
    if best == "unk" or share < SURE_LANGUAGE_SHARE or share <= runner_up_share:
        return None
    return best


def detect_language_afresh(text: str) -> str:
    """The language of ``text``, detected now: what ``detect_language`` asks when nothing remembers it."""
    text = bounded(text, 1000)
    if _KANA.search(text):
        return "ja"
    if _HANGUL.search(text):
        return "ko"
    if is_cjk(text):
        return "zh" if not _KANA.search(text) else "ja"
    if _CYRILLIC.search(text):
        return "ru"
    scores = language_shares(text)
    best, score = scores[0]
    return best if best != "unk" and score > 0 else "en"


def split_sentences(text: str) -> list[str]:
    text = text.strip()
    if not text:
        return []
    if is_cjk(text):
        parts = _SENTENCE_END_CJK.split(text)
    else:
        parts = simplemma.split_sentences(text)
    return [p.strip() for p in parts if p and p.strip()]


@lru_cache(maxsize=32)
def stop_words(language: str) -> frozenset[str]:
    name = LEMMATISED_LANGUAGES.get(language)
    return frozenset(get_stop_words(name)) if name else frozenset()


def most_stop_words(tokens: list[str], languages) -> tuple[str, ...]:
    """The languages among ``languages`` whose stop words ``tokens`` use most (ties all kept, in the given
    order); none when no token is a stop word of any."""
    counts = {language: sum(1 for t in tokens if t in stop_words(language)) for language in languages}
    most = max(counts.values(), default=0)
    return tuple(language for language, n in counts.items() if n == most) if most else ()


def unheld_function_words(text: str) -> frozenset[str]:
    """The words of a Latin-script text in none of the languages the dictionaries hold surely
    (``language_if_sure`` None) that are stop words of the wider language(s) whose lists cover most of its
    words: "bir", "var" and "mı" in a Turkish question, "mi" in an Italian one. Read by no dictionary, such
    a text's function words would otherwise count as keywords and make any row that shares one "match".
    Empty for a text a dictionary holds, or in another script.

    >>> sorted(unheld_function_words("Bana bir hikaye anlatır mısın?"))
    ['bana', 'bir']
    >>> sorted(unheld_function_words("Where does the customer live?"))
    []
    """
    if is_cjk(text) or _CYRILLIC.search(text) or language_if_sure(text) is not None:
        return frozenset()
    tokens = sorted(set(words(text)))
    languages = most_stop_words(tokens, sorted(set(WIDER_STOP_WORD_LISTS) - CYRILLIC_WIDER))
    return frozenset(t for t in tokens if any(t in stop_words(language) for language in languages))


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(unicodedata.normalize("NFKC", text))]


# Without simplemma's own token cache: it kept every word it was asked about — a forgotten PIN, a pet's name —
# readable for the life of the process (#28.3). ``LEMMAS`` below remembers lookups without the words.
_LEMMATIZER = simplemma.Lemmatizer(
    cache_max_size=0, lemmatization_strategy=DefaultStrategy(greedy=False, low_memory=LOW_MEMORY_DICTIONARIES)
)


class _KnownWords(LemmatizationStrategy):
    """Which words each language's dictionary holds, as simplemma's language detection asks it (a lemma or
    None), remembered under keyed digests like ``LEMMAS``: the low-memory dictionaries take ~2 ms to score one
    short question in five languages, most of a recall's time beyond its SQL, and the same everyday words
    come back in every question. Only whether a word is known is kept, and no word."""

    def __init__(self, max_entries: int):
        self._known = BoundedMemo(max_entries)
        self._strategy = DefaultStrategy(greedy=False, low_memory=LOW_MEMORY_DICTIONARIES)

    def get_lemma(self, token: str, lang: str) -> str | None:
        key = text_key(f"{lang}\x00{token}")
        known = self._known.get(key)
        if known is None:
            known = self._strategy.get_lemma(token, lang) is not None
            self._known.put(key, known)
        return token if known else None

    def clear(self) -> None:
        self._known.clear()

    def entries(self) -> list[tuple[bytes, bool]]:
        """What is remembered, oldest first: (keyed digest of the language and word, whether it is known)."""
        return self._known.items()

    def __len__(self) -> int:
        return len(self._known)


KNOWN_WORDS = _KnownWords(max_entries=65536)
_DETECTORS = tuple(
    simplemma.LanguageDetector(LATIN_LANGUAGES, sampler, KNOWN_WORDS)
    for sampler in (simplemma.MostCommonTokenSampler(), simplemma.RelaxedMostCommonTokenSampler())
)


def language_shares(text: str) -> list[tuple[str, float]]:
    """``simplemma.langdetect(text, LATIN_LANGUAGES)``: each language's share of the text's words, best first
    ("unk" last), through ``KNOWN_WORDS``; the second token sampler only breaks a tie of the first."""
    shares: list[tuple[str, float]] = []
    for detector in _DETECTORS:
        found = detector.proportion_in_each_language(text)
        shares = sorted(found.items(), key=lambda item: (item[0] == "unk", -item[1]))
        if len(shares) == 1 or shares[0][1] != shares[1][1]:
            return shares
    return shares


class _Lemmas:
    """The lemmas looked up before (the low-memory dictionaries are slow to search), under keyed digests of
    the words (memory/text/text_keys.py), each kept as the edit that turns the word into its lemma: characters
    cut from its end and the ending added — for a word no dictionary knows (a name, a number), nothing. A
    word the customer asked to forget is not left readable in the process that read it."""

    def __init__(self, max_entries: int):
        self._edits = BoundedMemo(max_entries)

    def lemma(self, word: str, language: str, lookup) -> str:
        key = text_key(f"{language}\x00{word}")
        edit = self._edits.get(key)
        base = word.lower()  # the lemma is lower-case: an edit from "Zorblat" would spell it out again
        if edit is None:
            found = lookup(word, language)
            shared = len(os.path.commonprefix([base, found]))
            edit = (len(base) - shared, found[shared:])
            self._edits.put(key, edit)
        cut, ending = edit
        return base[: len(base) - cut] + ending

    def clear(self) -> None:
        self._edits.clear()

    def entries(self) -> list[tuple[bytes, int, str]]:
        """What is remembered, oldest first: (keyed digest of the language and word, characters cut from the
        word's end, the ending added) — never a word."""
        return [(key, cut, ending) for key, (cut, ending) in self._edits.items()]

    def __len__(self) -> int:
        return len(self._edits)


LEMMAS = _Lemmas(max_entries=65536)


def _looked_up(word: str, language: str) -> str:
    return _LEMMATIZER.lemmatize(word, language).lower()


def lemma(word: str, language: str) -> str:
    if len(word) > MODEL_WORD_CHARS:
        return word[:MODEL_WORD_CHARS]  # no language has such words; the lemmatiser would crawl
    if language not in LEMMATISED_LANGUAGES:
        return word
    # A turn asks for the same few words hundreds of times.
    return once_in_block(f"lemma:{language}", word, lambda: _remembered_lemma(word, language))


def _remembered_lemma(word: str, language: str) -> str:
    try:
        return LEMMAS.lemma(word, language, _looked_up)
    except ValueError:
        return word


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping character pairs of each CJK run, skipping single-kana particles on their own."""
    grams = []
    for run in re.findall(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]+", text):
        if len(run) == 1:
            if run not in _JA_PARTICLES:
                grams.append(run)
            continue
        grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    return grams


def content_terms(text: str, language: str | None = None) -> list[str]:
    """The meaning-bearing terms of a text: lemmas without stop words, or CJK bigrams; digits kept."""
    language = language or detect_language(text)
    terms: list[str] = []
    if language in ("ja", "zh", "ko") or is_cjk(text):
        terms.extend(cjk_bigrams(text))
        latin = re.sub(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]", " ", text)
        terms.extend(w for w in words(latin) if len(w) > 1 or w.isdigit())
        return terms
    stops = stop_words(language)
    for word in words(text):
        if word.isdigit():
            terms.append(word)
            continue
        if word in stops and word not in MONTHS and word not in NUMBER_WORDS:
            continue
        if len(word) < 2:
            continue
        terms.append(lemma(word, language))
    return terms


def value_terms(text: str, language: str | None = None) -> set[str]:
    """Numbers, months and weekdays: the parts of a statement that say *which* value holds."""
    language = language or detect_language(text)
    found = set(re.findall(r"\d+", unicodedata.normalize("NFKC", text)))
    for word in words(text):
        base = lemma(word, language)
        if word in MONTHS or base in MONTHS or word in WEEKDAYS or base in WEEKDAYS or word in NUMBER_WORDS:
            found.add(base)
    return found


# Kept by content_terms because they can carry a value ("un" is also French for one), but as search
# tokens they are articles: "¿Tienen un gato?" must not match "abrimos un segundo almacén".
ARTICLE_LEMMAS = {"un", "uno", "una", "ein", "eine", "jeden", "jedna"}
_HIRAGANA_ONLY = re.compile(r"^[\u3040-\u309f]+$")


def search_tokens(text: str, language: str | None = None) -> set[str]:
    """Tokens for the blind keyword index and query matching (lemmas or bigrams, no stop words).

    Japanese bigrams made only of hiragana (ます, すか, です, てい) are grammar, not content: they
    would make every polite question "match" every polite statement."""
    return {
        t for t in content_terms(text, language)
        if (len(t) >= 2 or t.isdigit()) and t not in ARTICLE_LEMMAS and not _HIRAGANA_ONLY.match(t)
    }  # fmt: skip


# Number words as the digits they stand for, so "four vans" and "4 vans" carry the same value.
NUMBER_WORD_DIGITS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "один": "1", "два": "2", "три": "3",
    "четыре": "4", "пять": "5", "шесть": "6", "jeden": "1", "dva": "2", "tři": "3", "čtyři": "4", "pět": "5",
    "šest": "6", "eins": "1", "zwei": "2", "drei": "3", "vier": "4", "fünf": "5", "sechs": "6", "uno": "1",
    "dos": "2", "tres": "3", "cuatro": "4", "cinco": "5", "seis": "6", "deux": "2", "trois": "3",
    "quatre": "4", "cinq": "5",
}  # fmt: skip
PARTITIVE = {"of", "из", "z", "de", "von", "d'"}
_JA_NAMED_PLACE = re.compile(r"([\u4e00-\u9fff]{2,}|[\u30a0-\u30ff]{2,})(?=に|で|へ|から|出身)")
_JA_TIME_PREFIX = re.compile(r"^(?:先月|先週|昨日|今日|今月|来月|去年|今年|最近|現在|今は|今)+")
_JA_MONTH = re.compile(r"(\d{1,2})月")
_JA_WEEKDAY = re.compile(r"[月火水木金土日]曜")
_CAPITALISED = re.compile(r"(?<![\w'’])([A-ZÀ-ÖØ-ÞĀ-ŽА-ЯЁ][^\W\d_]+)")


def proper_names(text: str, language: str | None = None) -> set[str]:
    """Names of people and places: capitalised words inside a sentence (lemmatised, lower case), or in
    Japanese a noun run before a place particle. German capitalises every noun, so it has none.

    >>> sorted(proper_names("Hi, my name is Alice Morgan and I live in Leeds.", "en"))
    ['alice', 'leeds', 'morgan']
    """
    language = language or detect_language(text)
    text = unicodedata.normalize("NFKC", text)
    if language in ("ja", "zh", "ko"):
        return {_JA_TIME_PREFIX.sub("", run) for run in _JA_NAMED_PLACE.findall(text)} - {""}
    if language == "de":
        return set()
    names = set()
    for sentence in split_sentences(text):
        for match in _CAPITALISED.finditer(sentence):
            start = match.start()
            before = sentence[:start].rstrip(" \"'«„“(")
            if not before or before.endswith((":", "—", "-")) and len(before) < 20:
                continue  # the first word of a sentence or clause is capitalised anyway
            word = match.group(1).lower()
            if word in stop_words(language) or word in MONTHS or word in WEEKDAYS or word.rstrip("s") in WEEKDAYS:
                continue
            names.add(word)  # as written: lemmatisers mangle names ("Brně" → "brnět"); see same_name
    return names


def value_classes(text: str, language: str | None = None) -> dict[str, set[str]]:
    """The values a statement carries, by class: numbers (digits, number words as digits), months,
    weekdays and names. Two statements about one attribute whose values differ in a class say different things.

    >>> value_classes("We have four vans and 12 drivers in Brno.", "en")["number"] == {"4", "12"}
    True
    """
    language = language or detect_language(text)
    numbers = set(re.findall(r"\d+", unicodedata.normalize("NFKC", text)))
    months, weekdays = set(), set()
    tokens = words(text)
    for position, word in enumerate(tokens):
        base = lemma(word, language)
        following = tokens[position + 1] if position + 1 < len(tokens) else ""
        if word in NUMBER_WORD_DIGITS and following in PARTITIVE:
            continue  # "one of our vans" counts nothing
        if word in NUMBER_WORD_DIGITS:
            numbers.add(NUMBER_WORD_DIGITS[word])
        elif word in MONTHS or base in MONTHS:
            months.add(base if base in MONTHS else word)
        elif word in WEEKDAYS or base in WEEKDAYS:
            weekdays.add(base if base in WEEKDAYS else word)
    if language == "ja":
        normal = unicodedata.normalize("NFKC", text)
        months |= {f"{m}月" for m in _JA_MONTH.findall(normal)}
        weekdays |= set(_JA_WEEKDAY.findall(normal))
    return {"number": numbers, "month": months, "weekday": weekdays, "name": proper_names(text, language)}


def same_name(a: str, b: str) -> bool:
    """One name in two grammatical cases: a common stem of all but the last two letters.

    >>> same_name("brno", "brně"), same_name("казани", "казань"), same_name("leeds", "york")
    (True, True, False)
    """
    if a == b:
        return True
    return common_prefix_length(a, b) >= max(3, min(len(a), len(b)) - 2)


def common_prefix_length(a: str, b: str) -> int:
    """How many letters two words begin with alike: the stem they share before their endings differ."""
    return len(os.path.commonprefix([a, b]))


# Two words are one stem when they begin alike for at least this many letters and for most of the shorter
# word: lemmatisers give an adjective and its noun different lemmas ("бухгалтерский" / "бухгалтерия",
# "účetní" / "účetnictví", "accounting" / "accountant"), which exact lemmas never match.
STEM_PREFIX_LETTERS = 5
STEM_PREFIX_SHARE = 0.6


def same_stem(a: str, b: str) -> bool:
    """
    >>> same_stem("účetní", "účetnictví"), same_stem("účetní", "účet")
    (True, False)
    """
    shorter = min(len(a), len(b))
    if shorter < STEM_PREFIX_LETTERS or a.isdigit() or b.isdigit():
        return False
    common = common_prefix_length(a, b)
    return common >= STEM_PREFIX_LETTERS and common >= STEM_PREFIX_SHARE * shorter


def carries_words(content: str, words: set[str] | frozenset[str], language: str | None) -> bool:
    """Whether ``content`` carries one of ``words`` (search tokens) or a word of the same stem, its tokens read
    once in its language and without one."""
    stored = search_tokens(content, language) | search_tokens(content)
    return bool(stored & words) or any(same_stem(word, token) for word in words for token in stored)
