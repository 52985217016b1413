"""Deciding whether a customer message asks to forget something, and what.

The decision is a language question, so it belongs to a judge: the ``openai`` engine asks the
model with the candidate memories in front of it; the ``offline`` engine applies the documented
rule set in ``offline_lexicon`` (EXPLICIT_FORGET, CORRECTION). Either way the judge only picks
from candidates that code has already bounded (``memory.forgetting``).
"""

from __future__ import annotations

import dataclasses
import logging
import re

from django.conf import settings

from memory import offline_lexicon as lexicon
from memory.extraction import ModelUnavailable
from memory.text_analysis import detect_language, normalise

logger = logging.getLogger(__name__)

FORGET_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["is_forget_request", "delete_ids", "confirmation"],
    "properties": {
        "is_forget_request": {"type": "boolean"},
        "delete_ids": {"type": "array", "items": {"type": "string"}},
        "confirmation": {"type": ["string", "null"]},
    },
}
NEGATIONS = {
    "en": r"\b(?:don't|do not|doesn't|does not|didn't|never|not|no longer|isn't|is not|aren't|that's not|n't)\b",
    "ru": r"(?<!\w)(?:не|нет|больше не|никогда)(?!\w)",
    "cs": r"(?<!\w)(?:není|nejsme|ne|nikdy|už ne)(?!\w)",
    "de": r"\b(?:nicht|kein|keine|keinen|nie|niemals|nicht mehr)\b",
    "es": r"(?<!\w)(?:no|nunca|ya no)(?!\w)",
    "fr": r"(?<!\w)(?:ne|n'|pas|jamais|plus)(?!\w)",
    "ja": r"(?:ではありません|じゃない|ではない|ません|ない)",
}


@dataclasses.dataclass
class ForgetIntent:
    kind: str | None  # "explicit", "correction" or None
    targets: list[str]  # texts to match stored memories against
    language: str


def _phrases(table: dict, language: str) -> list[str]:
    return [p.strip() for p in table.get(language, "").split(",") if p.strip()]


def _find(text: str, phrase: str, language: str) -> int:
    if language == "ja":
        return text.find(phrase)
    match = re.search(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", text)
    return match.start() if match else -1


def _denegated(text: str, language: str) -> str:
    pattern = NEGATIONS.get(language)
    return re.sub(r"\s+", " ", re.sub(pattern, " ", text)).strip() if pattern else text


def _statement_not_request(before: str, language: str) -> bool:
    """ "Don't forget …", "we never forget …": the verb is negated or has a subject, so nothing is asked."""
    before = before.rstrip(" ,")
    return any(
        before == word or before.endswith(" " + word) for word in _phrases(lexicon.NOT_A_REQUEST_BEFORE, language)
    )


def read_intent(message: str) -> ForgetIntent:
    """The rule set's reading: explicit request, correction, or neither; and what to match."""
    language = detect_language(message)
    text = normalise(message)
    for phrase in _phrases(lexicon.EXPLICIT_FORGET, language):
        at = _find(text, phrase, language)
        if at < 0 or _statement_not_request(text[:at], language):
            continue
        if language == "ja":
            # Japanese names the target before the verb: 「家具について忘れてください」.
            target = text[:at]
            for marker in (*_phrases(lexicon.FORGET_TARGET_MARKERS, language), "を"):
                target = target.removesuffix(marker)
        else:
            rest = text[at + len(phrase) :]
            target = rest
            for marker in _phrases(lexicon.FORGET_TARGET_MARKERS, language):
                where = _find(rest, marker, language)
                if where >= 0:
                    target = rest[where + len(marker) :]
                    break
        target = target.strip(" .,!?:;。、！？")
        return ForgetIntent("explicit", [t for t in {target, _denegated(target, language)} if t], language)
    if any(_find(text, p, language) >= 0 for p in _phrases(lexicon.CORRECTION, language)):
        return ForgetIntent("correction", [message, _denegated(text, language)], language)
    return ForgetIntent(None, [message], language)


@dataclasses.dataclass
class Judgement:
    is_forget_request: bool
    delete_ids: list[str]
    confirmation: str | None
    engine: str


def is_negated(text: str, language: str | None = None) -> bool:
    language = language or detect_language(text)
    pattern = NEGATIONS.get(language)
    return bool(pattern and re.search(pattern, normalise(text)))


def judge_offline(intent: ForgetIntent, message: str, candidates: list[tuple[str, str]]) -> Judgement:
    if intent.kind is None:
        return Judgement(False, [], None, "offline")
    if intent.kind == "explicit":
        return Judgement(True, [memory_id for memory_id, _ in candidates], None, "offline")
    # A correction contradicts what it negates: "we don't deliver on Sundays" deletes "we deliver on
    # Sundays", not "we never deliver on Sundays", which it agrees with.
    negated = is_negated(message, intent.language)
    contradicted = [memory_id for memory_id, content in candidates if is_negated(content) != negated]
    return Judgement(bool(contradicted), contradicted, None, "offline")


def judge_with_model(message: str, candidates: list[tuple[str, str]]) -> Judgement:
    from memory.openai_extractor import chat_client, chat_json, prompt

    listed = "\n".join(f"{memory_id}: {content}" for memory_id, content in candidates)
    data = chat_json(
        chat_client(),
        system=prompt("forget_system.txt"),
        user=f"Customer message:\n<<<\n{message}\n>>>\n\nStored memories:\n{listed}",
        schema_name="forget_judgement",
        schema=FORGET_SCHEMA,
    )
    ids = [str(i) for i in data.get("delete_ids") or [] if isinstance(i, str | int)]
    confirmation = data.get("confirmation") if isinstance(data.get("confirmation"), str) else None
    return Judgement(bool(data.get("is_forget_request")), ids, confirmation, "openai")


def judge(message: str, intent: ForgetIntent, candidates: list[tuple[str, str]]) -> Judgement:
    """With candidates and a model, the model decides; otherwise (or if it fails) the rule set does."""
    if candidates and settings.ENGRAM_EXTRACTION_ENGINE == "openai":
        try:
            return judge_with_model(message, candidates)
        except ModelUnavailable as exc:
            logger.warning("forget judgement fell back to the rule set: %s", exc)
    return judge_offline(intent, message, candidates)
