"""What to search for, given a query: keywords, topic keys and extra search phrases.

Offline, keywords and topic keys come from the query's own words. With a chat model configured it
proposes them (and extra phrases); if the model fails, recall falls back to the offline analysis
rather than failing the turn.
"""

from __future__ import annotations

import dataclasses
import logging

from django.conf import settings

from memory.llm.errors import ModelUnavailable
from memory.text.analysis import (
    content_terms,
    detect_language,
    is_cjk,
    normalise,
    search_tokens,
    unheld_function_words,
    words,
)

logger = logging.getLogger(__name__)

QUERY_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["keywords", "topic_keys", "phrases"],
    "properties": {
        "keywords": {"type": "array", "items": {"type": "string"}},
        "topic_keys": {"type": "array", "items": {"type": "string"}},
        "phrases": {"type": "array", "items": {"type": "string"}},
    },
}


@dataclasses.dataclass
class QueryAnalysis:
    keywords: set[str]
    topic_keys: set[str]
    phrases: list[str]
    engine: str


def offline_analysis(query: str) -> QueryAnalysis:
    """The query's own words as keywords and topic keys, without the function words of a language the
    dictionaries do not hold (``unheld_function_words``: Turkish "bir", Italian "mi")."""
    language = detect_language(query)
    function_words = unheld_function_words(query)
    keywords = search_tokens(query, language) - function_words
    topic_keys = {normalise(t) for t in content_terms(query, language)} | {w for w in words(query) if len(w) > 2}
    topic_keys -= function_words
    if is_cjk(query):
        compact = "".join(query.split())
        topic_keys |= {compact[i : i + n] for n in (2, 3, 4) for i in range(len(compact) - n + 1)}
    return QueryAnalysis(keywords=keywords, topic_keys=topic_keys, phrases=[], engine="offline")


def model_analysis(query: str) -> QueryAnalysis:
    from memory.llm.client import chat_client, chat_json, prompt

    base = offline_analysis(query)
    data = chat_json(
        chat_client(),
        system=prompt("query_system.txt"),
        user=query,
        schema_name="query_analysis",
        schema=QUERY_SCHEMA,
    )
    keywords = {t for k in data.get("keywords") or [] if isinstance(k, str) for t in search_tokens(k)}
    topics = {normalise(k) for k in data.get("topic_keys") or [] if isinstance(k, str) and k.strip()}
    phrases = [p.strip() for p in data.get("phrases") or [] if isinstance(p, str) and p.strip()][:3]
    return QueryAnalysis(
        keywords=base.keywords | keywords, topic_keys=base.topic_keys | topics, phrases=phrases, engine="openai"
    )


def analyse_query(query: str) -> QueryAnalysis:
    if settings.ENGRAM_EXTRACTION_ENGINE != "openai":
        return offline_analysis(query)
    try:
        return model_analysis(query)
    except ModelUnavailable as exc:
        logger.warning("query analysis fell back to offline: %s", exc)
        return offline_analysis(query)
