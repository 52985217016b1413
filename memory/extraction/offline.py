"""The deterministic offline extraction engine (the default when no chat model is configured).

Per customer sentence: drop questions, small talk, reactions and compliments; strip opening
greetings, fillers and discourse markers ("Hi,", "well,", "actually", "Correction:"); split "…, and I
…" into one statement per clause; keep statements about the customer (first person, or an
instruction addressed to the agent); classify the kind with the rule set in ``lexicon``;
name a topic from the statement's own nouns; score importance (hard constraints and dated
statements above plain ones). Each entry's content is one contiguous span of the customer's own
words, so it is grounded by construction; the grounding step still checks it.
"""

from __future__ import annotations

import datetime
import re
from functools import lru_cache

from memory.extraction import lexicon
from memory.extraction.engine import Candidate, CustomerText
from memory.text.analysis import (
    content_terms,
    detect_language,
    normalise,
    proper_names,
    split_sentences,
    value_terms,
    words,
)

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


def _starts_with_any(table_name: str, sentence: str, language: str) -> bool:
    return any(
        sentence.startswith(p) and (language == "ja" or not sentence[len(p) : len(p) + 1].isalnum())
        for p in _phrases(table_name, language)
    )


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


def is_question(sentence: str, language: str) -> bool:
    stripped = sentence.rstrip()
    if stripped.endswith(("?", "？")) or stripped.startswith("¿"):
        return True
    if language == "ja" and re.search(r"(ですか|ますか|か)[。]?$", stripped):
        return True
    return _starts_with_any("QUESTION_OPENERS", normalise(stripped), language)


def is_small_talk(sentence: str, language: str) -> bool:
    if len(words(sentence)) <= 2 and any(_is_greeting_in(sentence, other) for other in lexicon.SMALL_TALK):
        return True  # "¡Hola!" is too short to tell its language reliably
    return _is_greeting_in(sentence, language)


def _is_greeting_in(sentence: str, language: str) -> bool:
    text = normalise(sentence)
    remainder = text
    for phrase in sorted(_phrases("SMALL_TALK", language), key=len, reverse=True):
        if language == "ja":
            remainder = remainder.replace(phrase, " ")
        else:
            remainder = re.sub(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", " ", remainder)
    leftover = content_terms(remainder, language)
    if language == "ja":
        leftover = [t for t in leftover if _CJK_NOUN_RUN.search(t)]
    return remainder != text and not leftover


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


def is_reaction(sentence: str, language: str) -> bool:
    """Reactions and compliments ("Yep, Melanie!", "Woohoo!", "Your support really means a lot.")."""
    if len(words(sentence)) <= 3 and language != "ja":
        # "¡Genial, Melanie!" is too short to tell its language reliably
        return any(_is_reaction_in(sentence, other) for other in lexicon.REACTIONS if other != "ja")
    return _is_reaction_in(sentence, language)


def _is_reaction_in(sentence: str, language: str) -> bool:
    text = normalise(sentence)
    if _has_any("COMPLIMENTS", text, language) and not value_terms(sentence, language):
        if not _speaks_of_self(text, language):
            return True  # "Your support really means a lot"; "Thanks, I live in Leeds" is still a fact
    remainder = text
    for phrase in sorted(_phrases("REACTIONS", language), key=len, reverse=True):
        if language == "ja":
            remainder = remainder.replace(phrase, " ")
        else:
            remainder = re.sub(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", " ", remainder)
    if remainder == text:
        return False
    names = proper_names(sentence, language) | {w.lower() for w in re.findall(r"[A-ZÀ-ÖØ-ÞА-ЯЁ][\w'-]+", sentence)}
    leftover = [t for t in content_terms(remainder, language) if t not in names and normalise(t) not in names]
    if language == "ja":
        leftover = [t for t in leftover if _CJK_NOUN_RUN.search(t)]
    return not leftover


def classify(sentence: str, language: str) -> str | None:
    """The kind of entry a customer sentence gives, or None when it says nothing about them."""
    text = normalise(sentence)
    if _has_any("REMIND_ME", text, language):
        return "task"
    addressed_to_agent = _mentions_word("SECOND_PERSON", text, language)
    if _has_any("INSTRUCTION", text, language) and (
        addressed_to_agent or _starts_with_any("INSTRUCTION_OPENERS", text, language)
    ):
        return "instruction"
    speaks_of_self = _speaks_of_self(text, language)
    if not speaks_of_self and language != "ja" and _has_any("INSTRUCTION", text, language):
        # (Japanese drops the speaker and its requests end in ください, handled above.)
        return None  # "Проверьте, пожалуйста, статус заказа": a request to the agent, not a fact
    if not speaks_of_self and _has_any("SMALL_TALK", text, language):
        return None  # "The weather is lovely today", "Thanks a lot!"
    if _has_any("TASK", text, language) and speaks_of_self:
        return "task"
    if event_offset_days(text, language) is not None:
        return "event"
    return "fact"


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


def topic_of(sentence: str, language: str) -> str:
    """A short topic name from the sentence's own words (the same words give the same topic)."""
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
    terms = [
        t
        for t in content_terms(sentence, language)
        if t not in values
        and not t.isdigit()
        and t not in markers
        and t not in names
        and t not in not_topics
        and t not in verbs
        and not _looks_like_a_verb(t, language)
    ]
    leading = terms[:3]
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


def _looks_like_a_verb(term: str, language: str) -> bool:
    if language == "en":
        return term.endswith(("ing", "ed")) and len(term) > 5
    if language == "ru":
        return term.endswith(("ть", "ться", "ти"))
    if language == "es":
        return term.endswith(("ar", "er", "ir")) and len(term) > 4
    if language == "cs":
        return len(term) > 4 and term.endswith("t") and term[-2] in "aeiouyáéěí"
    return False


class OfflineExtractor:
    name = "offline"

    def extract(self, message: CustomerText) -> list[Candidate]:
        entries: list[Candidate] = []
        for whole in split_sentences(message.text):
            language = detect_language(whole)
            if is_question(whole, language) or is_small_talk(whole, language) or is_reaction(whole, language):
                continue
            if _has_any("EXPLICIT_FORGET", normalise(whole), language):
                continue  # "forget that we have four vans" is a request, never a fact
            for sentence in split_clauses(strip_leading(whole, language), language):
                entry = self.entry_of(sentence, language, message)
                if entry is not None:
                    entries.append(entry)
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
                    quote=source.quote,
                    language=source.language,
                )
            )
        return entries

    def entry_of(self, sentence: str, language: str, message: CustomerText) -> Candidate | None:
        if is_small_talk(sentence, language) or is_reaction(sentence, language):
            return None
        kind = classify(sentence, language)
        if kind is None:
            return None
        event_at = None
        if kind == "event":
            event_at = message.sent_at - datetime.timedelta(days=event_offset_days(normalise(sentence), language))
        return Candidate(
            kind=kind,
            content=sentence.strip(),
            topic=topic_of(sentence, language),
            importance=importance_of(kind, sentence, language),
            keywords=list(dict.fromkeys(content_terms(sentence, language)))[:8],
            quote=sentence.strip(),
            event_at=event_at,
            language=language,
        )
