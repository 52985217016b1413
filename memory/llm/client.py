"""The one chat-model client: every model-backed step (extraction, the forget judge, query
analysis, synthesis, search keys) calls the model through ``chat_json``.

The prompt files live in ``memory/llm/prompts/``. A failed call, malformed JSON or a reply that
does not match the schema strictly raises ``ModelUnavailable``; each call spends from the request's
model-time budget (``memory.llm.budget``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from memory import telemetry
from memory.llm import budget
from memory.llm.errors import ModelUnavailable

PROMPTS = Path(__file__).parent / "prompts"


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
        with budget.metered_call(settings.ENGRAM_MODEL_TIMEOUT_SECONDS) as timeout:
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
