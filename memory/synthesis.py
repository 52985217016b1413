"""A short answer built only from the recalled memories, when a chat model is configured."""

from __future__ import annotations

import logging

from django.conf import settings

from memory.extraction import ModelUnavailable

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
    from memory.openai_extractor import chat_client, chat_json, prompt

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
    return (answer.strip() if isinstance(answer, str) and answer.strip() else None), "model"
