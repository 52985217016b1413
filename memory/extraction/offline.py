"""The deterministic offline extraction engine (the default when no chat model is configured).

What a customer sentence is decides whether it is mined, and that decision is learned
(``memory.understanding``: intent, attribute, polarity read from the bundled embedding), not listed:
a sentence is mined only when it reads as a ``statement`` or an ``instruction``; a ``correction`` gives
only its clauses that read as positive statements ("we're not a bakery, we're a coffee roaster" keeps
"we're a coffee roaster"); questions, small talk, reactions and forget requests give nothing.

Per kept sentence: strip opening greetings, fillers and discourse markers ("Hi,", "well,", "Correction:");
split it at commas, semicolons and the clause joiners into statements when every part reads as a
statement of its own and the parts are about different attributes ("My name is Dmitri, I live in
Kazan." gives a name and a residence, so a later move replaces the residence alone); classify the kind
with the rule set in ``lexicon`` (time words), a task by its learned reading (``task_reading``); the topic
is the learned attribute ("residence", "contact"), or else a noun of the statement's own that carries no
value; score importance (hard constraints and dated statements above plain ones). Each entry's content is
one contiguous span of the customer's own words, so it is grounded by construction; the grounding step still
checks it.

Every sentence and candidate part of a message is read in one batch (one embedding call a message).
"""

from __future__ import annotations

import dataclasses
import datetime
import itertools
import re
from functools import lru_cache

from memory.extraction.engine import Candidate, CustomerText
from memory.text import lexicon
from memory.text.analysis import (
    content_terms,
    detect_language,
    normalise,
    proper_names,
    split_sentences,
    value_terms,
    words,
)
from memory.understanding.features import ends_as_question
from memory.understanding.readings import SUBJECT_ATTRIBUTES, Reading, read
from memory.understanding.stands_alone import THRESHOLD, stands_alone_probabilities
from memory.understanding.task_reading import THRESHOLD as TASK_THRESHOLD
from memory.understanding.task_reading import task_probabilities
from memory.understanding.topic_words import subject_words

BASE_IMPORTANCE = {"fact": 0.5, "instruction": 0.7, "event": 0.4, "task": 0.5, "topic": 0.3}
TOPIC_IMPORTANCE = 0.3
_CJK_NOUN_RUN = re.compile(r"[\u4e00-\u9fff\u30a0-\u30ff]{2,}")


@lru_cache(maxsize=256)
def _phrases(table_name: str, language: str) -> tuple[str, ...]:
    text = getattr(lexicon, table_name).get(language, "")
    return tuple(p.strip() for p in text.split(",") if p.strip())


@lru_cache(maxsize=64)
def _words(table_name: str, language: str) -> frozenset[str]:
    return frozenset(getattr(lexicon, table_name).get(language, "").split())


def _contains(sentence: str, phrase: str, language: str) -> bool:
    if language == "ja":
        return phrase in sentence
    return re.search(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", sentence) is not None


def _has_any(table_name: str, sentence: str, language: str) -> bool:
    return any(_contains(sentence, p, language) for p in _phrases(table_name, language))


def _mentions_word(table_name: str, sentence: str, language: str) -> bool:
    vocabulary = _words(table_name, language)
    if language == "ja":
        return any(w in sentence for w in vocabulary)
    tokens = words(sentence)
    return any(t in vocabulary or t.replace("’", "'") in vocabulary for t in tokens) or (
        language == "fr" and "j'" in sentence and table_name == "FIRST_PERSON"
    )


def _speaks_of_self(sentence: str, language: str) -> bool:
    if _mentions_word("FIRST_PERSON", sentence, language):
        return True
    endings = lexicon.FIRST_PERSON_VERB_ENDINGS.get(language, ())
    return any(len(w) >= 4 and w.endswith(endings) for w in words(sentence)) if endings else False


@lru_cache(maxsize=16)
def _fillers(language: str) -> tuple[tuple[str, bool], ...]:
    """(phrase, needs punctuation after it), longest first."""
    entries = [
        (p.rstrip("*"), p.endswith("*"))
        for p in (x.strip() for x in lexicon.LEADING_FILLERS.get(language, "").split(","))
        if p
    ]
    return tuple(sorted(entries, key=lambda e: len(e[0]), reverse=True))


def strip_leading(sentence: str, language: str) -> str:
    """The sentence without its opening greetings, fillers and discourse markers: a suffix of it.

    >>> strip_leading("Correction: I moved to York last month.", "en")
    'I moved to York last month.'
    >>> strip_leading("So far we have 12 employees.", "en")
    'So far we have 12 employees.'
    """
    text = sentence.strip()
    for _ in range(4):
        lowered = text.lower()
        for phrase, needs_punctuation in _fillers(language):
            if not lowered.startswith(phrase):
                continue
            rest = text[len(phrase) :]
            if language == "ja":
                text = rest.lstrip()
                break
            if rest[:1].isalnum() or rest[:1] in "'’-":
                continue  # a longer word that begins the same way
            stripped = rest.lstrip()
            if needs_punctuation and stripped[:1] not in (",", ":", "!", ";", "—", "–"):
                continue
            text = stripped.lstrip(",:!;—– ").lstrip()
            break
        else:
            break
    return text if len(words(text)) >= 2 or (language == "ja" and len(text) >= 4) else sentence.strip()


@lru_cache(maxsize=16)
def _clause_break(language: str) -> re.Pattern | None:
    joiners = _phrases("CLAUSE_JOINERS", language)
    pronouns = sorted(_words("FIRST_PERSON", language), key=len, reverse=True)
    if not joiners or not pronouns:
        return None
    joined = "|".join(re.escape(j) for j in joiners)
    subject = "|".join(re.escape(p) for p in pronouns)
    endings = lexicon.FIRST_PERSON_VERB_ENDINGS.get(language, ())
    if endings:  # pro-drop: "a bydlím v Brně" opens a statement with the verb alone
        subject += "|" + "|".join(rf"\w{{2,}}{re.escape(e)}" for e in endings)
    return re.compile(rf",?\s+(?:{joined})\s+(?=(?:now\s+|теперь\s+|teď\s+)?(?:{subject})(?![\w']))", re.IGNORECASE)


def split_clauses(sentence: str, language: str) -> list[str]:
    """One statement per clause when "and/but" opens a new statement about the customer.

    >>> split_clauses("My name is Alice Morgan and I live in Leeds.", "en")
    ['My name is Alice Morgan', 'I live in Leeds.']
    """
    pattern = _clause_break(language)
    if pattern is None:
        return [sentence]
    parts = [p.strip() for p in pattern.split(sentence)]
    # Each part must be a statement of its own, not a trailing noun ("… with my partner and our dog").
    return [p for p in parts if p] if all(len(words(p)) >= 3 for p in parts) else [sentence]


def event_offset_days(text: str, language: str) -> int | None:
    for pattern, days_per_unit in lexicon.EVENT_AGO.get(language, []):
        match = re.search(pattern, text)
        if match:
            return int(match.group(1)) * days_per_unit
    for phrase, days in lexicon.EVENT_TIMES.get(language, []):
        if _contains(text, phrase, language):
            return days
    return None


def importance_of(kind: str, sentence: str, language: str) -> float:
    text = normalise(sentence)
    score = BASE_IMPORTANCE[kind]
    if kind == "fact" and not _speaks_of_self(text, language):
        score -= 0.1  # "the renewal moved to June": still theirs, but said less directly
    if _has_any("HARD_CONSTRAINT", text, language):
        score += 0.25
    if value_terms(sentence, language):
        score += 0.1
    return round(min(1.0, max(0.05, score)), 2)


@lru_cache(maxsize=16)
def _marker_terms(language: str) -> frozenset[str]:
    """Words of the rule set itself (time words, "please", "always"): never a topic."""
    phrases = [
        p for table in ("INSTRUCTION", "TASK", "HARD_CONSTRAINT", "SMALL_TALK") for p in _phrases(table, language)
    ]
    phrases += [phrase for phrase, _ in lexicon.EVENT_TIMES.get(language, [])]
    if language in ("ja", "zh"):
        return frozenset(phrases)
    return frozenset(t for p in phrases for t in (*content_terms(p, language), *words(p)))


_CAPITALISED_INSIDE = re.compile(r"(?<=[\w,;:)\]\"'»”] )([A-ZÀ-ÖØ-ÞА-ЯЁ][\w'’-]+)")


def _value_words(sentence: str, language: str) -> set[str]:
    """Words that carry a value or a name, never a subject: any word of a token holding a digit or "@"
    ("555-0123", "ivan@example.com", "A-1234") and any capitalised word inside the sentence."""
    found = set()
    for token in sentence.split():
        if "@" in token or any(c.isdigit() for c in token):
            found |= set(words(token)) | set(content_terms(token, language))
    if language != "de":  # German capitalises every noun
        for name in _CAPITALISED_INSIDE.findall(sentence):
            found |= {name.lower(), *content_terms(name, language)}
    return found


def topic_of(sentence: str, language: str) -> str:
    """A short topic name from the sentence's own words (the same words give the same topic): a subject,
    never a value (no digit, no "@", no name of a person or place)."""
    markers = _marker_terms(language)
    if language in ("ja", "zh"):
        places = proper_names(sentence, language)
        runs = [
            r
            for r in _CJK_NOUN_RUN.findall(sentence)
            if r not in _words("FIRST_PERSON", "ja")
            and not any(m in r or r in m for m in markers)
            and not any(p in r for p in places)
        ]
        return runs[-1] if runs else ""
    values = value_terms(sentence, language)
    names = proper_names(sentence, language)
    names |= {t for t in content_terms(" ".join(names), language)} if names else set()
    not_topics = _words("NOT_A_TOPIC", language) | _words("FIRST_PERSON", language)
    verbs = _verbs_after_subject(sentence, language)
    not_topics |= _value_words(sentence, language)
    terms = [
        t
        for t in content_terms(sentence, language)
        if t not in values
        and not any(c.isdigit() for c in t)
        and "@" not in t
        and t not in markers
        and t not in names
        and t not in not_topics
        and t not in verbs
    ]
    subjects = subject_words(terms) if terms else set()  # a verb or an evaluation is no topic, in any language
    leading = [t for t in terms if t in subjects][:3]
    return max(leading, key=len) if leading else ""


def _verbs_after_subject(sentence: str, language: str) -> set[str]:
    """The word right after "I"/"we" is the verb ("I prefer email", "we arrive on Monday")."""
    from memory.text.analysis import lemma

    tokens = words(sentence)
    pronouns = _words("SUBJECT_PRONOUNS", language)
    verbs: set[str] = set()
    if language in lexicon.FIRST_PERSON_VERB_ENDINGS and tokens:
        verbs.add(lemma(tokens[0], language))  # pro-drop: the statement opens with its verb
        verbs.add(tokens[0])
    for before, after in zip(tokens, tokens[1:], strict=False):
        if before in pronouns and after not in pronouns:
            verbs.add(lemma(after, language))
            verbs.add(after)
    return verbs


# ---------------------------------------------------------------------------------------------
# The learned decisions, read once a message

KEPT_INTENTS = ("statement", "instruction")
# A sentence is kept when a statement and an instruction together are at least this likely (``kept_score``):
# a missed statement can be said again, a stored request ("Forget that we have four vans.") stays as a
# wrong fact. A correction's affirmed parts need the same confidence.
MIN_KEEP_CONFIDENCE = 0.5
# How sure the reading must be of each part's attribute for a sentence to be stored as separate statements.
SPLIT_ATTRIBUTE_CONFIDENCE = 0.6
# How likely a later part must be to say by itself whom it is about (``stands_alone_probabilities``) for the
# sentence to split there: "We've got a cat too, called Pepper." is one statement ("called Pepper." reads
# 0.48, "se llama Toby." 0.02), which split gave a row "called Pepper." that read as the customer's name and
# superseded it; "My name is Dmitri, I live in Kazan." splits (0.96, 1.00).
SPLIT_PART_STANDS_ALONE = 0.5
AFFIRMED_CONFIDENCE = 0.8  # how sure the polarity head must be that nothing is denied
# A topic is the learned attribute when it names a subject; otherwise it comes from the statement's own nouns.
LABELLED_TOPICS = SUBJECT_ATTRIBUTES
# A sentence splits into at most this many candidate parts before every contiguous run of them is
# read; past it, only the finest parts are read (a run-on sentence, not a compound statement).
MAX_PARTS_FOR_RUNS = 5
MIN_PART_CHARS = 8  # grounding's shortest quote that is not a whole sentence
MIN_PART_CHARS_CJK = 3
_PART_BREAK = re.compile(r"\s*[,;](?=\s)\s*|\s*[，；、]\s*")


def learned_topic_holds(topic: str, text: str) -> bool:
    """Whether ``topic`` is a learned attribute name and ``text`` reads as being about it (within a turn the
    sentence's vector is the one extraction embedded: ``read`` caches it under the turn's space)."""
    return topic in LABELLED_TOPICS and read([reading_form(text)])[0].attribute == topic


_SENTENCE_END = ".!?…。！？\"'»”)"


def reading_form(text: str) -> str:
    """What is read for a part cut from a sentence: the part, ended as a sentence ("My name is Dmitri"
    reads as "My name is Dmitri."), since the learned heads weigh how a sentence ends."""
    text = text.strip()
    if not text or text[-1] in _SENTENCE_END:
        return text
    return text + ("。" if _CJK_NOUN_RUN.search(text) else ".")


@dataclasses.dataclass
class _Sentence:
    """One customer sentence (opening fillers stripped), its candidate parts and the runs to read."""

    text: str
    language: str
    bounds: list[tuple[int, int]]  # the finest parts: (start, end) in ``text``
    runs: list[tuple[int, int]]  # (first part, last part) whose text is read

    def run_text(self, run: tuple[int, int]) -> str:
        return self.text[self.bounds[run[0]][0] : self.bounds[run[1]][1]].strip()


def _part_bounds(text: str, language: str) -> list[tuple[int, int]]:
    """Where a sentence may split: commas and semicolons before a space, and "…, and I …" joiners."""
    breaks = [(m.start(), m.end()) for m in _PART_BREAK.finditer(text)]
    joiner = _clause_break(language)
    if joiner is not None:
        breaks += [(m.start(), m.end()) for m in joiner.finditer(text)]
    bounds, cursor = [], 0
    for start, end in sorted(breaks, key=lambda b: (b[0], -b[1])):  # of two breaks at one place, the longer
        if start < cursor:
            continue  # ", и я": the comma and the joiner are one break, and the joiner goes with it
        if start > cursor:
            bounds.append((cursor, start))
        cursor = end
    if cursor < len(text):
        bounds.append((cursor, len(text)))
    return bounds or [(0, len(text))]


def _long_enough(part: str, language: str) -> bool:
    if language in ("ja", "zh") or _CJK_NOUN_RUN.search(part):
        return len(part) >= MIN_PART_CHARS_CJK
    return len(part) >= MIN_PART_CHARS and bool(content_terms(part, language))


def _sentence(whole: str) -> _Sentence:
    language = detect_language(whole)
    text = strip_leading(whole, language)
    bounds = _part_bounds(text, language)
    count = len(bounds)
    if count == 1:
        runs = []
    elif count <= MAX_PARTS_FOR_RUNS:
        runs = [(i, j) for i in range(count) for j in range(i, count) if (i, j) != (0, count - 1)]
    else:
        runs = [(i, i) for i in range(count)]
    return _Sentence(text=text, language=language, bounds=bounds, runs=runs)


def _segmentations(count: int):
    """Every way to cut ``count`` parts into two or more contiguous runs."""
    for cuts in itertools.product((False, True), repeat=count - 1):
        if not any(cuts):
            continue
        runs, start = [], 0
        for index, cut in enumerate(cuts):
            if cut:
                runs.append((start, index))
                start = index + 1
        runs.append((start, count - 1))
        yield runs


def _statements(sentence: _Sentence, read_of: dict[tuple[int, int], Reading]) -> list[tuple[int, int]] | None:
    """The split of a kept sentence into statements of different attributes, or None to keep it whole.

    Every part must read as a statement (or a standing instruction) of its own, long enough to cite, about
    an attribute the reading is sure of, and no two parts may be about the same attribute; of the splits
    that qualify, the finest wins. An unsure attribute is usually a fragment that cannot stand alone ("so
    the fleet is now eight.", "after that I'm out on the road."): the sentence then stays whole."""
    best, best_score = None, None
    count = len(sentence.bounds)
    candidates = _segmentations(count) if count <= MAX_PARTS_FOR_RUNS else [[(i, i) for i in range(count)]]
    standing: dict[tuple[int, int], float] = {}
    for runs in candidates:
        found = [read_of.get(r) for r in runs]
        if any(r is None or r.intent not in KEPT_INTENTS for r in found):
            continue
        if any(ends_as_question(sentence.run_text(r)) for r in runs):
            continue
        attributes = [r.attribute for r in found]
        if len(set(attributes)) != len(attributes):
            continue
        if any(
            r.attribute not in SUBJECT_ATTRIBUTES or r.attribute_confidence < SPLIT_ATTRIBUTE_CONFIDENCE for r in found
        ):
            continue
        if not all(_long_enough(sentence.run_text(r), sentence.language) for r in runs):
            continue
        if not _later_parts_stand_alone(sentence, runs, standing):
            continue
        score = (len(runs), min(r.intent_confidence for r in found))
        if best_score is None or score > best_score:
            best, best_score = runs, score
    return best


def _later_parts_stand_alone(sentence: _Sentence, runs: list[tuple[int, int]], standing: dict) -> bool:
    """Whether each part after the first says by itself whom it is about (read once a run, kept in ``standing``)."""
    unread = [run for run in runs[1:] if run not in standing]
    if unread:
        texts = [reading_form(sentence.run_text(run)) for run in unread]
        standing.update(zip(unread, stands_alone_probabilities(texts), strict=True))
    return all(standing[run] >= SPLIT_PART_STANDS_ALONE for run in runs[1:])


def _affirmed_parts(sentence: _Sentence, read_of: dict[tuple[int, int], Reading]) -> list[tuple[int, int]]:
    """A correction's parts that state something positive ("we're not a bakery, we're a coffee roaster"
    gives "we're a coffee roaster"). A part that follows one and holds no content word of its own ("…
    on the fifth floor, not the third") stays with it: alone it says nothing, and the clause it
    completes is the one grounding checks."""
    count = len(sentence.bounds)
    kept = []
    for index in range(count if count > 1 else 0):
        reading = read_of.get((index, index))
        if reading is None or reading.intent != "statement" or reading.negative:
            continue
        if reading.intent_confidence < MIN_KEEP_CONFIDENCE:
            continue
        if not _long_enough(sentence.run_text((index, index)), sentence.language):
            continue
        last = index
        while last + 1 < count and not content_terms(sentence.run_text((last + 1, last + 1)), sentence.language):
            last += 1
        kept.append((index, last))
    return kept


def kept_score(reading: Reading) -> float:
    """How likely the sentence is one memory keeps: a statement and a standing instruction together ("I prefer
    to be contacted by email." reads 0.49 one, the rest mostly the other), and — when nothing in it is denied —
    a correction too: an affirmative correction states the value that holds now ("Поправка: машин у нас семь"),
    and a plain statement of a value is often read half as one ("у нас четыре фургона." 0.42 and 0.42)."""
    kept = sum(reading.intent_scores[intent] for intent in KEPT_INTENTS)
    if reading.polarity == "positive" and reading.polarity_confidence >= AFFIRMED_CONFIDENCE:
        kept += reading.intent_scores["correction"]
    return kept


def kind_of(sentence: str, intent: str, language: str) -> str:
    """The kind of entry a kept sentence gives (the learned intent decided that it is kept); whether it is rather a
    task is read after, for the message's entries together (``_as_tasks``)."""
    if intent == "instruction":
        return "instruction"
    return "event" if event_offset_days(normalise(sentence), language) is not None else "fact"


def _joined_to_what_came_before(per_sentence: list[list[Candidate]], text: str) -> list[Candidate]:
    """The entries of a message, each one saying by itself whom and what it is about: an entry that leans on
    what was said before it ("He hid his bone in my slipper once!", ``memory.understanding.stands_alone``) joins
    the entry of the sentence before it ("I adopted a beagle last spring."). When that sentence gave none —
    small talk ("Thanks, Mel!"), a question, or nothing because what it is about was said in the other speaker's
    line — it stays as it is: joining a reaction names nothing, and leaving it out lost more than it saved on
    LoCoMo (decision 0029)."""
    candidates = [(index, entry) for index, entries in enumerate(per_sentence) for entry in entries]
    # Only an entry that opens its sentence: the parts a sentence was split into were each read as a statement of
    # its own ("My name is Alice, I live in Leeds": the second part's subject is the first part's).
    # A correction's affirmed part cites its whole sentence for the writer: that is its context already.
    openers = [entries[0] for entries in per_sentence if entries and entries[0].quote == entries[0].content]
    leaning = _leaning(openers)
    joined: list[Candidate] = []
    last_sentence = None  # the sentence the last entry of ``joined`` ends with
    for index, entry in candidates:
        if id(entry) in leaning and last_sentence == index - 1:
            before = joined[-1]
            joined[-1] = dataclasses.replace(
                before,
                content=f"{before.content} {entry.content}",
                quote=_words_from_to(text, before.quote, entry.quote),
                keywords=list(dict.fromkeys(before.keywords + entry.keywords))[:8],
                importance=max(before.importance, entry.importance),
            )
        else:
            joined.append(entry)
        last_sentence = index
    return joined


def _words_from_to(text: str, first: str, last: str) -> str:
    """The customer's own words from ``first`` to ``last`` (what lies between them included: an opening "Well,"
    the entry left out), so the joined entry's quote is one piece of the message."""
    start = text.find(first)
    end = text.find(last, start + len(first)) if start >= 0 else -1
    if end < 0:
        return f"{first} {last}"
    return text[start : end + len(last)]


def _leaning(entries: list[Candidate]) -> set[int]:
    """The entries (their ``id``) read as leaning on what came before them."""
    if not entries:
        return set()
    probabilities = stands_alone_probabilities([entry.content for entry in entries])
    return {id(entry) for entry, p in zip(entries, probabilities, strict=True) if p < THRESHOLD}


def _as_tasks(entries: list[Candidate]) -> list[Candidate]:
    """The entries, those the learned reading calls a pending one-off action as ``task`` (``memory.understanding
    .task_reading``): a task expires with its session, so a lasting fact in a task's words ("I have to avoid
    gluten") stays what it is."""
    probabilities = task_probabilities([entry.content for entry in entries])
    return [
        dataclasses.replace(
            entry, kind="task", event_at=None, importance=importance_of("task", entry.content, entry.language)
        )
        if p >= TASK_THRESHOLD
        else entry
        for entry, p in zip(entries, probabilities, strict=True)
    ]


class OfflineExtractor:
    name = "offline"

    def extract(self, message: CustomerText) -> list[Candidate]:
        sentences = [_sentence(whole) for whole in split_sentences(message.text)]
        texts = []
        for sentence in sentences:
            texts.append(sentence.text)
            texts.extend(reading_form(sentence.run_text(run)) for run in sentence.runs)
        read_all = iter(read([t.strip() for t in texts]))
        per_sentence: list[list[Candidate]] = []
        for sentence in sentences:
            whole = next(read_all)
            count = len(sentence.bounds)
            read_of = {(0, count - 1): whole} | {run: next(read_all) for run in sentence.runs}
            per_sentence.append(self.entries_of(sentence, whole, read_of, message))
        entries = _as_tasks(_joined_to_what_came_before(per_sentence, message.text))
        topics = {}
        for entry in entries:
            if entry.topic and entry.kind in ("fact", "instruction", "event"):
                topics.setdefault(normalise(entry.topic), entry)
        for topic, source in topics.items():
            entries.append(
                Candidate(
                    kind="topic",
                    content=source.topic,
                    topic=source.topic,
                    importance=TOPIC_IMPORTANCE,
                    keywords=[topic],
                    quote=source.content,  # the statement itself: what a learned topic is read from
                    language=source.language,
                )
            )
        return entries

    def entries_of(
        self, sentence: _Sentence, whole: Reading, read_of: dict[tuple[int, int], Reading], message: CustomerText
    ) -> list[Candidate]:
        count = len(sentence.bounds)
        if ends_as_question(sentence.text):
            return []  # a question states nothing, however the rest of it reads
        kept = kept_score(whole) >= MIN_KEEP_CONFIDENCE
        if kept:
            runs = _statements(sentence, read_of) or [(0, count - 1)]
            quote = None
        elif whole.intent == "correction" and whole.intent_confidence >= MIN_KEEP_CONFIDENCE:
            runs = _affirmed_parts(sentence, read_of)
            quote = sentence.text  # the words that name the value it corrects, for the writer
        else:
            return []  # a question, small talk, a reaction, a request to forget
        entries = []
        for run in runs:
            text = sentence.text.strip() if run == (0, count - 1) else sentence.run_text(run)
            reading = read_of[run] if kept else read_of[(run[0], run[0])]  # its own words
            entries.append(self.entry_of(text, sentence.language, message, reading, quote=quote))
        return entries

    def entry_of(
        self, sentence: str, language: str, message: CustomerText, reading: Reading, *, quote: str | None = None
    ) -> Candidate:
        kind = kind_of(sentence, reading.intent, language)
        event_at = None
        if kind == "event":
            event_at = message.sent_at - datetime.timedelta(days=event_offset_days(normalise(sentence), language))
        topic = reading.attribute if reading.attribute in LABELLED_TOPICS else topic_of(sentence, language)
        return Candidate(
            kind=kind,
            content=sentence.strip(),
            topic=topic,
            importance=importance_of(kind, sentence, language),
            keywords=list(dict.fromkeys(content_terms(sentence, language)))[:8],
            quote=(quote or sentence).strip(),
            event_at=event_at,
            language=language,
        )
