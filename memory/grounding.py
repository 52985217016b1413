"""Grounding: every entry, from any engine, must be said by the customer in this turn, nothing added.

The rules (docs/decisions/0008-span-grounding.md has examples) run in code, never in the model:

1. The entry cites a quote; the quote is a real span of this turn's customer text (after NFKC,
   lower case and collapsed white space) of meaningful length: a whole sentence, or at least
   ``MIN_QUOTE_CHARS`` characters holding a content word. The sentence(s) the quote lies in are
   the entry's *span*.
2. Everything in the entry that says *which* value holds is in the span: every number and amount
   (digits or number words: "four" and "4" are the same), month and weekday, e-mail address, id
   (a word mixing letters and digits) and proper name (a capitalised word inside a sentence).
3. Its polarity agrees with the clauses of the span that carry its words: a negation ("not",
   "never", "не", "ne-", "nicht", "no", "pas", "ない"…) added or dropped is a rejection.
4. Its content terms are covered almost entirely by the span: at most one in ten may be missing.
5. It does not address the agent's policy or other customers (``memory.injected_instructions``).
6. Its meaning is close to a customer sentence (embedding distance), an extra guard.
A grounded entry keeps only the topic key and keywords its span supports, and an event date only
when the span speaks of time.

``support_problem`` (rules 2–4) is also how a synthesized answer is checked against the memories
it came from, and a model summary against the text it summarises.

>>> support_problem("We run four vans.", "We run a fleet of four vans.") is None
True
>>> support_problem("We run 127 vans.", "We run a fleet of four vans.")
'adds a number the customer did not say: 127'
>>> support_problem("We never run vans.", "We run a fleet of four vans.")
'its polarity differs from the words it cites (a negation added or dropped)'
"""

from __future__ import annotations

import dataclasses
import math
import re
import unicodedata

import numpy as np

from memory.extraction import Candidate
from memory.injected_instructions import addresses_the_agent
from memory.offline_extractor import event_offset_days
from memory.text_analysis import (
    MONTHS,
    SUPPORTED_LANGUAGES,
    WEEKDAYS,
    content_terms,
    detect_language,
    is_cjk,
    lemma,
    normalise,
    split_sentences,
    words,
)

MIN_QUOTE_CHARS = 8
# A message this short may mix languages and is lemmatised under each; a long text (a document to
# summarise) under its own language only, or lemmatising it would take seconds.
MIXED_LANGUAGE_CHARS = 4000
MIN_QUOTE_CHARS_CJK = 3
MAX_MISSING_TERMS_RATIO = 0.1  # "almost entirely": one content term in ten may be the entry's own word
# Cosine distance to the closest customer sentence (multilingual-e5-small: paraphrases ~0.05,
# unrelated sentences ~0.2+). A topic name is a word, farther from any whole sentence.
MAX_SEMANTIC_DISTANCE = {"topic": 0.25}
DEFAULT_MAX_SEMANTIC_DISTANCE = 0.15

NUMBER_WORD_VALUES = {
    **dict.fromkeys(("one", "один", "jeden", "jedna", "eins", "uno", "una", "un", "une"), "1"),
    **dict.fromkeys(("two", "два", "dva", "dvě", "zwei", "dos", "deux"), "2"),
    **dict.fromkeys(("three", "три", "tři", "drei", "tres", "trois"), "3"),
    **dict.fromkeys(("four", "четыре", "čtyři", "vier", "cuatro", "quatre"), "4"),
    **dict.fromkeys(("five", "пять", "pět", "fünf", "cinco", "cinq"), "5"),
    **dict.fromkeys(("six", "шесть", "šest", "sechs", "seis"), "6"),
    **dict.fromkeys(("seven", "семь", "sedm", "sieben", "siete", "sept"), "7"),
    **dict.fromkeys(("eight", "восемь", "osm", "acht", "ocho", "huit"), "8"),
    **dict.fromkeys(("nine", "девять", "devět", "neun", "nueve", "neuf"), "9"),
    **dict.fromkeys(("ten", "десять", "deset", "zehn", "diez", "dix"), "10"),
    "eleven": "11",
    "twelve": "12",
}
# Articles that are also the number one: counted as a value only when written as a digit.
_ARTICLE_ONES = {"un", "une", "una", "uno", "ein", "eine", "jeden", "jedna", "one"}

NEGATION_WORDS = {
    # en, ru, cs, de, es, fr: words that turn a statement into its opposite
    "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot",
    "не", "нет", "никогда", "ни", "нельзя", "ничего", "никто", "без",
    "ne", "nikdy", "ani", "nic", "nikdo", "žádný", "žádná", "žádné", "žádní", "bez",
    "nicht", "kein", "keine", "keinen", "keiner", "keinem", "keines", "nie", "niemals", "nichts", "ohne",
    "nunca", "jamás", "tampoco", "ningún", "ninguna", "ninguno", "nada", "nadie", "sin",
    "pas", "jamais", "aucun", "aucune", "rien", "sans",
}  # fmt: skip
# Czech negates verbs with a prefix ("nejezdíme", "nemáme"); these words only look negated.
_CS_NOT_NEGATED = ("neděl", "nebo", "nejen", "než", "nemoc", "němec", "německ", "nejlep", "nejvíc", "největ",
                   "nejdřív", "nejmen", "nejbliž", "nejpozd", "nejčast", "nejvyš", "nejniž", "nerez", "netto",
                   "neutr", "nevěst")  # fmt: skip
_JA_NEGATION = re.compile(r"ない|ません|なかった|ではなく|じゃなく|無し|なし")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"\d+(?:[.,:/'’-]\d+)*")
_CLAUSE_BREAK = re.compile(
    r"[,;:()。、！？!?\n]|\.(?:\s+|$)|\s(?:but|however|whereas|although|но|а|однако|ale|však|aber|sondern|pero|sino|mais)\s",
    re.IGNORECASE,
)
_DATE = re.compile(r"\b\d{1,4}[./-]\d{1,2}(?:[./-]\d{0,4})?\b|\d+\s*(?:年|月|日)")
_TIME_WORD_STARTS = frozenset(w[:2] for w in MONTHS | WEEKDAYS)  # "мая", "května": inflected
_HIRAGANA_ONLY = re.compile(r"^[\u3040-\u309f]+$")


@dataclasses.dataclass
class Grounded:
    candidate: Candidate
    vector: np.ndarray
    lexical_support: float
    semantic_distance: float


@dataclasses.dataclass
class Rejected:
    candidate: Candidate
    reason: str


# ---------------------------------------------------------------------------------------------
# What a text says: its values, names, terms and polarity


def number_values(text: str) -> set[str]:
    """Numbers as digits, whatever the separators or the language of a number word.

    >>> sorted(number_values("4,000 kg on 12.5. and four vans"))
    ['125', '4', '4000']
    """
    text = unicodedata.normalize("NFKC", text)
    found = {re.sub(r"\D", "", match) for match in _NUMBER.findall(text)}
    for word in words(text):
        value = NUMBER_WORD_VALUES.get(word)
        if value and word not in _ARTICLE_ONES:
            found.add(value)
    return found


def time_words(text: str) -> set[str]:
    """Months and weekdays (as lemmas of any supported language)."""
    found = set()
    for word in words(text):
        if word[:2] not in _TIME_WORD_STARTS:
            continue  # (inflection keeps the first letters of every month and weekday name)
        forms = {word} | {lemma(word, language) for language in SUPPORTED_LANGUAGES}
        found |= {f for f in forms if f in MONTHS or f in WEEKDAYS}
    return found


def emails(text: str) -> set[str]:
    return {e.lower().rstrip(".") for e in _EMAIL.findall(unicodedata.normalize("NFKC", text))}


def identifiers(text: str) -> set[str]:
    """Words that mix letters and digits: order numbers, plates, codes."""
    return {w for w in words(text) if any(c.isdigit() for c in w) and any(c.isalpha() for c in w)}


def proper_names(text: str) -> set[str]:
    """Capitalised words inside a sentence (a sentence's first word says nothing about being a name)."""
    if is_cjk(text):
        return set()
    names = set()
    for sentence in split_sentences(text) or [text]:
        for clause in re.split(r"[:;\"“”«»()]", sentence):
            raw = re.findall(r"[^\W_]+(?:[-'’][^\W_]+)*", unicodedata.normalize("NFKC", clause))
            for word in raw[1:]:
                if word[0].isupper() and not any(c.isdigit() for c in word) and word not in ("I", "I'm", "I’m"):
                    names.add(word.lower())
    return names


def is_negated(text: str, language: str) -> bool:
    if language in ("ja", "zh", "ko") or is_cjk(text):
        return bool(_JA_NEGATION.search(text))
    for word in words(text):
        if word in NEGATION_WORDS or word.endswith(("n't", "n’t")) or word.startswith(("n'", "n’")):
            return True
        if language == "cs" and len(word) >= 5 and word.startswith("ne") and not word.startswith(_CS_NOT_NEGATED):
            return True
    return False


def _similar(a: str, b: str) -> bool:
    """Two inflected forms of one word: same up to a short ending (Russian and Czech cases)."""
    if a == b:
        return True
    if a.isdigit() or b.isdigit():
        return False
    shared = len(_common_prefix(a, b))
    return shared >= 4 and shared >= min(len(a), len(b)) - 2


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


@dataclasses.dataclass
class Span:
    """Customer (or memory) text an entry is checked against, analysed once."""

    text: str
    language: str
    terms: set[str]
    surface: set[str]
    numbers: set[str]
    times: set[str]
    emails: set[str]
    clauses: list[str]
    _clause_spans: list[Span] | None = dataclasses.field(default=None, repr=False)

    @classmethod
    def of(cls, text: str) -> Span:
        language = detect_language(text)
        terms = set(content_terms(text, language))
        if not is_cjk(text) and len(text) <= MIXED_LANGUAGE_CHARS:
            for other in ("en", "cs", "de", "es", "fr", "ru"):
                if other != language:  # mixed-language messages: lemmatise under each language too
                    terms.update(content_terms(text, other))
        clauses = [c.strip() for c in _CLAUSE_BREAK.split(text) if c and c.strip()]
        return cls(
            text=normalise(text),
            language=language,
            terms=terms,
            surface=set(words(text)),
            numbers=number_values(text),
            times=time_words(text),
            emails=emails(text),
            clauses=clauses or [text],
        )

    def clause_spans(self) -> list[Span]:
        """Each clause analysed on its own (once: a summary's sentences all ask about the same text)."""
        if self._clause_spans is None:
            self._clause_spans = [Span.of(c) if len(self.clauses) > 1 else self for c in self.clauses]
        return self._clause_spans

    def covers(self, term: str, cjk: bool) -> bool:
        if cjk:
            return term in self.text
        if term in self.terms or term in self.surface:
            return True
        if (term if term.isdigit() else NUMBER_WORD_VALUES.get(term)) in self.numbers:
            return True  # "4" and "four" (whether a number was added is rule 2's business)
        return any(_similar(term, known) for known in self.terms | self.surface)


def _claim_terms(claim: str, language: str) -> tuple[list[str], bool]:
    cjk = language in ("ja", "zh", "ko") or is_cjk(claim)
    # Negation words are rule 3's business; identifiers and numbers were checked by rule 2.
    terms = [t for t in content_terms(claim, language) if t not in NEGATION_WORDS]
    if cjk:
        terms = [t for t in terms if not _HIRAGANA_ONLY.match(t)]  # grammar (です, ます), not content
    return list(dict.fromkeys(terms)), cjk


def support_problem(claim: str, source: str | Span, *, statement: bool = True) -> str | None:
    """Why ``claim`` says more than (or the opposite of) ``source``; None when the source says it all.

    ``statement=False`` for a topic name: a subject, not a claim, so it has no polarity to agree."""
    span = source if isinstance(source, Span) else Span.of(source)
    added = sorted(emails(claim) - span.emails)
    if added:
        return f"adds an e-mail address the customer did not say: {', '.join(added)}"
    added = sorted(i for i in identifiers(claim) if i not in span.surface)
    if added:
        return f"adds an id the customer did not say: {', '.join(added)}"
    added = sorted(number_values(claim) - span.numbers)
    if added:
        return f"adds a number the customer did not say: {', '.join(added)}"
    added = sorted(time_words(claim) - span.times)
    if added:
        return f"adds a date the customer did not say: {', '.join(added)}"
    added = sorted(n for n in proper_names(claim) if not span.covers(n, cjk=False))
    if added:
        return f"adds a name the customer did not say: {', '.join(added)}"
    language = detect_language(claim)
    terms, cjk = _claim_terms(claim, language)
    if not terms:
        return "says nothing that can be checked"
    missing = [t for t in terms if not span.covers(t, cjk)]
    if len(missing) > math.floor(len(terms) * MAX_MISSING_TERMS_RATIO):
        covered = 1 - len(missing) / len(terms)
        return f"only {covered:.0%} of its words are in the customer's message (missing: {', '.join(missing[:5])})"
    if statement and is_negated(claim, language) != _cited_clauses_negated(terms, cjk, span):
        return "its polarity differs from the words it cites (a negation added or dropped)"
    return None


def _cited_clauses_negated(terms: list[str], cjk: bool, span: Span) -> bool:
    """Polarity of the clauses that carry most of the claim's words ("We deliver on Mondays, but not
    on Sundays" supports "We deliver on Mondays", not "We deliver on Sundays")."""
    scored = []
    for clause, clause_span in zip(span.clauses, span.clause_spans(), strict=True):
        if cjk:
            score = sum(1 for t in terms if t in clause)
        else:
            score = sum(1 for t in terms if clause_span.covers(t, cjk=False))
        scored.append((score, clause))
    best = max(score for score, _ in scored)
    return any(is_negated(clause, span.language) for score, clause in scored if score == best)


# ---------------------------------------------------------------------------------------------
# The quote and the span it cites


def cited_span(quote: str, customer_text: str) -> tuple[str | None, str]:
    """(the customer sentence(s) the quote lies in, or None; the reason when None)."""
    wanted = normalise(quote).strip(" \"'“”«»„")
    if not wanted:
        return None, "no supporting quote from the customer"
    text = normalise(customer_text)
    at = text.find(wanted)
    if at < 0:
        return None, "the quote is not in the customer's message"
    sentences = []
    cursor = 0
    for sentence in split_sentences(customer_text):
        form = normalise(sentence)
        start = text.find(form, cursor)
        if start < 0:
            continue
        cursor = start + len(form)
        if start < at + len(wanted) and at < start + len(form):
            sentences.append((form, sentence))
    whole_sentence = any(wanted.rstrip(".!?。！？ ") == form.rstrip(".!?。！？ ") for form, _ in sentences)
    minimum = MIN_QUOTE_CHARS_CJK if is_cjk(wanted) else MIN_QUOTE_CHARS
    if not whole_sentence and (len(wanted) < minimum or not content_terms(wanted)):
        return None, "the quote is too short to show where the entry comes from"
    return (" ".join(s for _, s in sentences) if sentences else quote), ""


def check_candidate(candidate: Candidate, customer_text: str) -> str | None:
    """Rules 1–5 for one entry: the reason it is rejected, or None."""
    return _check(candidate, customer_text)[1]


def _check(candidate: Candidate, customer_text: str) -> tuple[Span | None, str | None]:
    span_text, reason = cited_span(candidate.quote, customer_text)
    if span_text is None:
        return None, reason
    if addresses_the_agent(candidate.content) or addresses_the_agent(span_text):
        return None, "addresses the agent's policy or other customers: not stored as an instruction"
    span = Span.of(span_text)
    return span, support_problem(candidate.content, span, statement=candidate.kind != "topic")


def _trimmed_to_span(candidate: Candidate, span: Span) -> Candidate:
    """The entry's other fields say no more than its span either: a topic key (which decides what a
    new entry may supersede) or a keyword not in the span is dropped, and so is an event date when
    the span says nothing about time."""
    topic = (
        candidate.topic if candidate.topic and support_problem(candidate.topic, span, statement=False) is None else ""
    )
    keywords = [k for k in candidate.keywords if support_problem(k, span, statement=False) is None]
    event_at = candidate.event_at
    if event_at is not None and not (span.times or _mentions_time(span.text, span.language)):
        event_at = None
    return dataclasses.replace(candidate, topic=topic, keywords=keywords, event_at=event_at)


def _mentions_time(text: str, language: str) -> bool:
    """ "yesterday", "3 days ago", "2026-03-14", "14.3.": the span says when."""
    return event_offset_days(text, language) is not None or _DATE.search(text) is not None


def ground(
    candidates: list[Candidate],
    candidate_vectors: np.ndarray,
    customer_text: str,
    sentence_vectors: np.ndarray,
) -> tuple[list[Grounded], list[Rejected]]:
    grounded, rejected = [], []
    for candidate, vector in zip(candidates, candidate_vectors, strict=True):
        span, reason = _check(candidate, customer_text)
        if reason is not None:
            rejected.append(Rejected(candidate, reason))
            continue
        candidate = _trimmed_to_span(candidate, span)
        distance = float(np.min(1.0 - sentence_vectors @ vector)) if len(sentence_vectors) else 1.0
        limit = MAX_SEMANTIC_DISTANCE.get(candidate.kind, DEFAULT_MAX_SEMANTIC_DISTANCE)
        if distance > limit:
            rejected.append(
                Rejected(candidate, f"its meaning is not close to anything the customer said (distance {distance:.2f})")
            )
            continue
        grounded.append(Grounded(candidate, vector, 1.0, distance))
    return grounded, rejected
