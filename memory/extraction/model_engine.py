"""Extraction through any OpenAI-compatible chat-completions endpoint, with a JSON-schema reply.

The model sees only the customer's message. The reply goes through ``memory.llm.client.chat_json``:
a failed call, malformed JSON or a reply that does not match the schema strictly raises
``ModelUnavailable`` (the turn is retried later). Grounding checks every entry afterwards.
"""

from __future__ import annotations

import dataclasses
import datetime

from memory.extraction.engine import KINDS, Candidate, CustomerText
from memory.llm.client import chat_client, chat_json, prompt
from memory.llm.errors import ModelUnavailable
from memory.text.analysis import detect_language
from memory.understanding.task_reading import THRESHOLD as TASK_THRESHOLD
from memory.understanding.task_reading import task_probabilities

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
        return _tasks_only_where_read_as_tasks(candidates)


def _tasks_only_where_read_as_tasks(candidates: list[Candidate]) -> list[Candidate]:
    """A task expires with its session, so the model's kind could delete a lasting fact ("I have to avoid gluten,
    I'm celiac." called a task): a task the learned reading does not call a pending one-off action is kept as a
    fact (``memory.understanding.task_reading``, decision 0031). A task it lets through only lives longer."""
    tasks = [candidate for candidate in candidates if candidate.kind == "task"]
    probabilities = task_probabilities([candidate.content for candidate in tasks])
    lasting = {id(task) for task, p in zip(tasks, probabilities, strict=True) if p < TASK_THRESHOLD}
    return [dataclasses.replace(c, kind="fact") if id(c) in lasting else c for c in candidates]


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
