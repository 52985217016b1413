"""Turning an episode's input arguments into the texts that are embedded and matched (search keys).

- a short text is its own key;
- a long text is compressed to its meaning first: with a chat model configured, a summary (only
  its sentences that the text supports, checked by grounding's rules; none: the offline key);
  offline, the key sentences chosen extractively (the sentences whose content terms recur most
  across the text), kept in their original order;
- a file (``{"filename", "content_type", "data_base64"}`` in JSON, or a multipart upload) is
  decoded to text and compressed the same way; the stored input keeps the file's metadata and
  digest, not the file;
- numbers, booleans, lists and objects are matched by their compact JSON text.

The key is stored beside the input and shown to operators, so what is matched is never a mystery.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import html
import json
import logging
import math
import re
from collections import Counter

from django.conf import settings
from django.core.exceptions import ValidationError

from memory.extraction.grounding import Span, supported
from memory.text.analysis import content_terms, detect_language, split_sentences

logger = logging.getLogger(__name__)

LONG_TEXT_CHARS = 1200
KEY_CHARS = 600
REDUNDANT_OVERLAP = 0.6
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_INPUT_CHARS = 200_000
TEXT_CONTENT_TYPES = {
    "text/plain", "text/markdown", "text/csv", "text/html", "application/json", "application/xml", "text/xml",
}  # fmt: skip

SUMMARY_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary"],
    "properties": {"summary": {"type": "string"}},
}


@dataclasses.dataclass(frozen=True)
class SearchKey:
    stored_input: object  # what is kept as the input (a file: its metadata)
    key: str  # the text that is embedded and matched
    compressed: str = ""  # "", "summary" or "extractive"


def key_for(argument: str, value) -> SearchKey:
    if isinstance(value, dict) and "data_base64" in value:
        return _file_key(argument, value)
    if isinstance(value, UploadedFile):
        return _file_key(argument, value.as_input())
    if isinstance(value, str):
        if len(value) > MAX_INPUT_CHARS:
            raise ValidationError({argument: [f"At most {MAX_INPUT_CHARS} characters; send a longer text as a file."]})
        if not value.strip():
            raise ValidationError({argument: ["Must not be empty."]})
        key, how = compress(value)
        return SearchKey(stored_input=value, key=key, compressed=how)
    if value is None:
        raise ValidationError({argument: ["Must not be null."]})
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if len(text) > MAX_INPUT_CHARS:
        raise ValidationError({argument: [f"At most {MAX_INPUT_CHARS} characters of JSON."]})
    key, how = compress(text)
    return SearchKey(stored_input=value, key=key, compressed=how)


@dataclasses.dataclass(frozen=True)
class UploadedFile:
    filename: str
    content_type: str
    data: bytes

    def as_input(self) -> dict:
        return {
            "filename": self.filename,
            "content_type": self.content_type,
            "data_base64": base64.b64encode(self.data).decode(),
        }


def _file_key(argument: str, value: dict) -> SearchKey:
    filename = str(value.get("filename") or "upload")[:200]
    content_type = str(value.get("content_type") or "text/plain").split(";")[0].strip().lower()
    try:
        data = base64.b64decode(value["data_base64"], validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise ValidationError({argument: ["data_base64 is not valid base64."]}) from None
    if len(data) > MAX_FILE_BYTES:
        raise ValidationError({argument: [f"The file is larger than {MAX_FILE_BYTES} bytes."]})
    text = file_text(argument, data, content_type)
    key, how = compress(text)
    stored = {
        "file": filename,
        "content_type": content_type,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    return SearchKey(stored_input=stored, key=key, compressed=how or "file")


def file_text(argument: str, data: bytes, content_type: str) -> str:
    if content_type not in TEXT_CONTENT_TYPES:
        readable = ", ".join(sorted(TEXT_CONTENT_TYPES))
        raise ValidationError({argument: [f"Files of type {content_type!r} cannot be read; send one of {readable}."]})
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationError({argument: ["The file is not UTF-8 text."]}) from None
    if content_type in ("text/html", "application/xml", "text/xml"):
        text = html.unescape(re.sub(r"<(script|style)\b.*?</\1>|<[^>]+>", " ", text, flags=re.S | re.I))
    text = re.sub(r"[ \t\r\f\v]+", " ", text).strip()
    if not text:
        raise ValidationError({argument: ["The file has no text."]})
    return text


def compress(text: str) -> tuple[str, str]:
    """(key, how): the text itself when short; otherwise a summary (model) or key sentences (offline)."""
    text = text.replace("\x00", "").strip()
    if len(text) <= LONG_TEXT_CHARS:
        return text, ""
    if settings.ENGRAM_EXTRACTION_ENGINE == "openai":
        summary = _model_summary(text)
        if summary:
            return summary, "summary"
    return extractive_summary(text), "extractive"


def extractive_summary(text: str, max_chars: int = KEY_CHARS) -> str:
    """The sentences that carry the text's most repeated content terms, in their original order."""
    sentences = [s.strip() for s in split_sentences(text) if s.strip()]
    if not sentences:
        return text[:max_chars]
    language = detect_language(text[:2000])
    terms_by_sentence = [set(content_terms(s[:2000], language)) for s in sentences]
    # A term's weight: how often the text returns to it, discounted when nearly every sentence has
    # it (boilerplate such as repeated log lines says little about what the case is).
    spread = Counter(t for terms in terms_by_sentence for t in terms)
    count = len(sentences)
    weight = {t: n * math.log((count + 1) / n) for t, n in spread.items()}
    scored = []
    for index, terms in enumerate(terms_by_sentence):
        value = sum(weight[t] for t in terms) / math.sqrt(len(terms) + 1) if terms else 0.0
        # An opening sentence usually states what the text is about.
        scored.append((value * (1.25 if index == 0 else 1.0), index))
    chosen, length = [], 0
    for _value, index in sorted(scored, key=lambda item: (-item[0], item[1])):
        sentence, terms = sentences[index], terms_by_sentence[index]
        if length and length + len(sentence) + 1 > max_chars:
            continue
        if any(_overlap(terms, terms_by_sentence[i]) > REDUNDANT_OVERLAP for i in chosen):
            continue
        chosen.append(index)
        length += len(sentence) + 1
        if length >= max_chars:
            break
    return " ".join(sentences[i] for i in sorted(chosen))[:max_chars]


def _overlap(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _model_summary(text: str) -> str:
    from memory.llm.client import chat_client, chat_json, prompt
    from memory.llm.errors import ModelUnavailable

    try:
        data = chat_json(
            chat_client(),
            system=prompt("summarize_key_system.txt"),
            user=text[:20_000],
            schema_name="summary",
            schema=SUMMARY_SCHEMA,
        )
    except ModelUnavailable as exc:
        logger.warning("summary for a search key failed, using key sentences: %s", exc)
        return ""
    return grounded_summary(data["summary"], text[:20_000])


def grounded_summary(summary: str, text: str) -> str:
    """The summary's sentences that the text supports (grounding's rules); "" when none are, so the
    extractive key is used instead of a sentence the model made up."""
    source = Span.of(text)
    sentences = split_sentences(summary[: KEY_CHARS * 4]) or [summary]
    kept = [s for s in sentences if supported(s, source) is None]
    if len(kept) < len(sentences):
        logger.warning(
            "summary for a search key: %s of %s sentences unsupported, dropped",
            len(sentences) - len(kept),
            len(sentences),
        )
    return " ".join(kept)[:KEY_CHARS]
