"""The deterministic offline extraction engine (the default when no chat model is configured).

Per customer sentence: drop questions and small talk; keep statements about the customer (first
person, or an instruction addressed to the agent); classify the kind with the rule set in
``offline_lexicon``; name a topic from the sentence's own content words; score importance (hard
constraints and dated statements above plain ones). Each entry's content is the customer's own
sentence, so it is grounded by construction; the grounding step still checks it.
"""

from __future__ import annotations

import datetime
import re
from functools import lru_cache

from memory import offline_lexicon as lexicon
from memory.extraction import Candidate, CustomerText
from memory.text_analysis import content_terms, detect_language, normalise, split_sentences, value_terms, words

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
        runs = [
            r
            for r in _CJK_NOUN_RUN.findall(sentence)
            if r not in _words("FIRST_PERSON", "ja") and not any(m in r or r in m for m in markers)
        ]
        return runs[-1] if runs else ""
    values = value_terms(sentence, language)
    terms = [t for t in content_terms(sentence, language) if t not in values and not t.isdigit() and t not in markers]
    leading = terms[:3]
    return max(leading, key=len) if leading else ""


class OfflineExtractor:
    name = "offline"

    def extract(self, message: CustomerText) -> list[Candidate]:
        entries: list[Candidate] = []
        for sentence in split_sentences(message.text):
            language = detect_language(sentence)
            if is_question(sentence, language) or is_small_talk(sentence, language):
                continue
            if _has_any("EXPLICIT_FORGET", normalise(sentence), language):
                continue  # "forget that we have four vans" is a request, never a fact
            kind = classify(sentence, language)
            if kind is None:
                continue
            event_at = None
            if kind == "event":
                event_at = message.sent_at - datetime.timedelta(days=event_offset_days(normalise(sentence), language))
            topic = topic_of(sentence, language)
            entries.append(
                Candidate(
                    kind=kind,
                    content=sentence.strip(),
                    topic=topic,
                    importance=importance_of(kind, sentence, language),
                    keywords=list(dict.fromkeys(content_terms(sentence, language)))[:8],
                    quote=sentence.strip(),
                    event_at=event_at,
                    language=language,
                )
            )
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
