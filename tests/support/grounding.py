"""An entry a model writes, and a customer to ground it for (grounding's tests)."""

from __future__ import annotations

import datetime

from memory.extraction.engine import Candidate
from memory.extraction.grounding import Speaker


def entry(content: str, quote: str) -> Candidate:
    return Candidate(kind="fact", content=content, topic="", importance=0.5, keywords=[], quote=quote)


CAROLINE = Speaker.of("Caroline", sent_at=datetime.datetime(2023, 5, 8, 13, 56, tzinfo=datetime.UTC))
