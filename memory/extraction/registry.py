"""Which extraction engine a deployment uses (``ENGRAM_EXTRACTION_ENGINE``)."""

from __future__ import annotations

from django.conf import settings

from memory.extraction.engine import Extractor
from memory.extraction.model_engine import OpenAIExtractor
from memory.extraction.offline import OfflineExtractor


def get_extractor() -> Extractor:
    engine = settings.ENGRAM_EXTRACTION_ENGINE
    if engine == "offline":
        return OfflineExtractor()
    if engine == "openai":
        return OpenAIExtractor.from_settings()
    raise ValueError(f"Unknown ENGRAM_EXTRACTION_ENGINE {engine!r}; use 'offline' or 'openai'.")
