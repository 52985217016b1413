"""What an extractor is given and what it returns: customer text in, candidate entries out.

The extractor only ever sees what the customer wrote in this turn. Agent replies are stored for
context but never passed here, so an agent's guess cannot come back as a fact about the customer.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Protocol

KINDS = ("fact", "topic", "event", "instruction", "task")


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
