"""What an extractor is given and what it returns: customer text in, candidate entries out.

The extractor only ever sees what the customer wrote in this turn. Agent replies are stored for
context but never passed here, so an agent's guess cannot come back as a fact about the customer.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Protocol

from django.conf import settings

KINDS = ("fact", "topic", "event", "instruction", "task")


class ModelUnavailable(RuntimeError):
    """The chat model could not answer (down, timed out, malformed reply). Retry later."""


@dataclasses.dataclass
class Candidate:
    kind: str
    content: str
    topic: str
    importance: float
    keywords: list[str]
    quote: str
    event_at: datetime.datetime | None = None
    language: str = ""


@dataclasses.dataclass(frozen=True)
class CustomerText:
    """One customer message: the only material extraction may use."""

    text: str
    sent_at: datetime.datetime


class Extractor(Protocol):
    name: str

    def extract(self, message: CustomerText) -> list[Candidate]: ...


def get_extractor() -> Extractor:
    engine = settings.ENGRAM_EXTRACTION_ENGINE
    if engine == "offline":
        from memory.offline_extractor import OfflineExtractor

        return OfflineExtractor()
    if engine == "openai":
        from memory.openai_extractor import OpenAIExtractor

        return OpenAIExtractor.from_settings()
    raise ValueError(f"Unknown ENGRAM_EXTRACTION_ENGINE {engine!r}; use 'offline' or 'openai'.")
