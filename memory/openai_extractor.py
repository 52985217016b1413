"""Extraction through any OpenAI-compatible chat-completions endpoint, with a JSON-schema reply.

The prompt files live in ``memory/prompts/``. The model sees only the customer's message. Every
reply, here and at every other call site, goes through ``chat_json``: a failed call, malformed
JSON or a reply that does not match the schema strictly raises ``ModelUnavailable`` (the turn is
retried later). Grounding checks every entry afterwards.
"""

from __future__ import annotations

import datetime
import json
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from memory import model_budget, telemetry
from memory.extraction import KINDS, Candidate, CustomerText, ModelUnavailable
from memory.text_analysis import detect_language

PROMPTS = Path(__file__).parent / "prompts"

ENTRY_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["entries"],
    "properties": {
        "entries": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["kind", "content", "topic", "importance", "keywords", "quote", "event_days_ago"],
                "properties": {
                    "kind": {"type": "string", "enum": list(KINDS)},
                    "content": {"type": "string"},
                    "topic": {"type": "string"},
                    "importance": {"type": "number"},
                    "keywords": {"type": "array", "items": {"type": "string"}},
                    "quote": {"type": "string"},
                    "event_days_ago": {"type": ["integer", "null"]},
                },
            },
        }
    },
}


@lru_cache(maxsize=8)
def prompt(name: str) -> str:
    return (PROMPTS / name).read_text()


def chat_client():
    from openai import OpenAI

    return OpenAI(
        base_url=settings.OPENAI_BASE_URL or None,
        api_key=settings.OPENAI_API_KEY or "not-needed",
        timeout=settings.ENGRAM_MODEL_TIMEOUT_SECONDS,
        max_retries=settings.ENGRAM_MODEL_MAX_RETRIES,
    )


MAX_REPLY_CHARS = 200_000


@lru_cache(maxsize=16)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json))


def reply_problem(data, schema: dict) -> str | None:
    """Why a parsed reply does not match its schema (the first error, with where it is), or None.

    Named by the schema's own words only — the rule broken and what the schema asks for — never by
    the refused value: it may quote the customer, and the reason is kept on the turn, shown to
    support staff and logged.

    >>> print(reply_problem({"entries": "four vans 4711"}, {"properties": {"entries": {"type": "array"}}}))
    entries: fails 'type' (the schema asks for "array")
    """
    error = best_match(_validator(json.dumps(schema, sort_keys=True)).iter_errors(data))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "the reply"
    wanted = json.dumps(error.validator_value, ensure_ascii=False, default=str)[:120]
    return f"{where}: fails {error.validator!r} (the schema asks for {wanted})"


@telemetry.chat_call
def chat_json(client, *, system: str, user: str, schema_name: str, schema: dict) -> dict:
    """One chat completion whose reply must match ``schema`` exactly; ModelUnavailable otherwise.

    A model's reply is input from a stranger: JSON that is not an object, a missing or extra field,
    a string where a boolean belongs ("false"), a number where a list belongs (``topic_keys: 5``),
    an oversized reply: each is a model failure, handled like a timeout by every caller.
    """
    import openai

    try:
        with model_budget.metered_call(settings.ENGRAM_MODEL_TIMEOUT_SECONDS) as timeout:
            if timeout is not None:
                client = client.with_options(timeout=timeout, max_retries=0)
            response = client.chat.completions.create(
                model=settings.ENGRAM_LLM_MODEL,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "schema": schema, "strict": True},
                },
                temperature=0,
            )
        content = response.choices[0].message.content
        if content is not None and len(content) > MAX_REPLY_CHARS:
            raise ModelUnavailable(f"chat model reply is too large ({len(content)} characters)")
        data = json.loads(content or "")
    except (openai.OpenAIError, json.JSONDecodeError, IndexError, AttributeError, TypeError, ValueError) as exc:
        raise ModelUnavailable(f"chat model failed: {exc.__class__.__name__}: {exc}"[:500]) from exc
    except RecursionError as exc:
        raise ModelUnavailable("chat model replied with JSON nested too deeply") from exc
    if not isinstance(data, dict):
        raise ModelUnavailable("chat model replied with JSON that is not an object")
    problem = reply_problem(data, schema)
    if problem is not None:
        raise ModelUnavailable(f"chat model reply does not match the {schema_name} schema: {problem}")
    return data


class OpenAIExtractor:
    name = "openai"

    def __init__(self, client):
        self._client = client

    @classmethod
    def from_settings(cls) -> OpenAIExtractor:
        return cls(chat_client())

    def extract(self, message: CustomerText) -> list[Candidate]:
        data = chat_json(
            self._client,
            system=prompt("extract_system.txt"),
            user=prompt("extract_user.txt").format(sent_at=message.sent_at.isoformat(), message=message.text),
            schema_name="memory_entries",
            schema=ENTRY_SCHEMA,
        )
        entries = data.get("entries")
        if not isinstance(entries, list):
            raise ModelUnavailable("chat model reply has no 'entries' list")
        candidates = []
        for raw in entries:
            candidate = _candidate(raw, message)
            if candidate is not None:
                candidates.append(candidate)
        return candidates


def _candidate(raw, message: CustomerText) -> Candidate | None:
    if not isinstance(raw, dict) or raw.get("kind") not in KINDS:
        return None
    content = str(raw.get("content") or "").strip()
    if not content:
        return None
    try:
        importance = min(1.0, max(0.0, float(raw.get("importance", 0.5))))
    except (TypeError, ValueError):
        importance = 0.5
    event_at = None
    days_ago = raw.get("event_days_ago")
    if raw["kind"] == "event" and isinstance(days_ago, int) and 0 <= days_ago <= 36500:
        event_at = message.sent_at - datetime.timedelta(days=days_ago)
    keywords = [str(k) for k in raw.get("keywords") or [] if isinstance(k, str | int)][:12]
    return Candidate(
        kind=raw["kind"],
        content=content[:2000],
        topic=str(raw.get("topic") or "").strip()[:200],
        importance=importance,
        keywords=keywords,
        quote=str(raw.get("quote") or "").strip(),
        event_at=event_at,
        language=detect_language(content),
    )
