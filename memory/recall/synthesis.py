"""A short answer built only from the recalled memories, when a chat model is configured.

The model's answer is checked like an extracted entry (``memory.extraction.grounding.supported``), with
the returned memories as the source: each sentence must be supported by the memories' text, with
every number, date, name and id in it, and the same polarity; it may reword them ("The customer lives in
York" from "I moved to York") as an entry may reword the customer. Unsupported sentences are dropped;
if none remain, the answer is null and the status says why.
"""

from __future__ import annotations

import logging

from django.conf import settings

from memory.extraction.grounding import Span, supported
from memory.llm.errors import ModelUnavailable
from memory.text.analysis import split_sentences

logger = logging.getLogger(__name__)

ANSWER_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["answer"],
    "properties": {"answer": {"type": ["string", "null"]}},
}


def synthesis_available() -> bool:
    return settings.ENGRAM_EXTRACTION_ENGINE == "openai"


def synthesize(query: str, hits: list[dict]) -> tuple[str | None, str]:
    """(answer, status). No memories: no answer, and the model is not even asked."""
    if not synthesis_available():
        return None, "unavailable: no chat model is configured"
    if not hits:
        return None, "no memories to answer from"
    from memory.llm.client import chat_client, chat_json, prompt

    listed = "\n".join(f"- {h['content']}" for h in hits)
    try:
        data = chat_json(
            chat_client(),
            system=prompt("synthesize_system.txt"),
            user=f"Memories:\n{listed}\n\nQuestion: {query}",
            schema_name="answer",
            schema=ANSWER_SCHEMA,
        )
    except ModelUnavailable as exc:
        logger.warning("synthesis failed: %s", exc)
        return None, "unavailable: the chat model did not answer"
    answer = data.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        return None, "model"
    return grounded_answer(answer, [h["content"] for h in hits])


def grounded_answer(answer: str, memories: list[str]) -> tuple[str | None, str]:
    """The sentences of ``answer`` that the memories support; (None, reason) when none are."""
    source = Span.of("\n".join(m.strip().rstrip(".!?。") + "." for m in memories))
    sentences = split_sentences(answer[:4000]) or [answer]
    kept = [s for s in sentences if supported(s, source) is None]
    if not kept:
        return None, "unsupported: the model's answer says things the memories do not"
    if len(kept) < len(sentences):
        return " ".join(kept), f"model, {len(sentences) - len(kept)} unsupported sentence(s) dropped"
    return " ".join(kept), "model"
