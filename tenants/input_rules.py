"""The rules every way in applies to what a caller names and writes: the API's serializers, the console's
forms, the models and the MCP server take their patterns from here, so an id the API refuses is refused
everywhere.

Patterns match the whole string (``\\A`` … ``\\Z``): with ``^`` … ``$`` a trailing newline passes, since ``$``
also matches before one. Text must be Unicode PostgreSQL can store: no lone surrogate (JSON lets a client send
"\\ud800", which no UTF-8 encoder writes) and no NUL.
"""

from __future__ import annotations

import re

ID_CHARACTERS = "A-Za-z0-9._:@-"
EXTERNAL_ID_PATTERN = rf"\A[{ID_CHARACTERS}]{{1,128}}\Z"  # a space's external id, a session id
AGENT_PATTERN = r"\A[A-Za-z0-9 ._:@-]{1,100}\Z"
ARGUMENT_PATTERN = r"\A[A-Za-z0-9_.-]{1,64}\Z"  # a search key's argument name
KEY_ID_PATTERN = r"\A[A-Za-z0-9._:-]{1,64}\Z"  # a master key's id in the keyring
ID_MESSAGE = "Use 1 to 128 characters from A-Z, a-z, 0-9 and . _ : @ -"
# What a refusal says the rule is ("Agent 'x': use …").
AGENT_RULE = "1 to 100 characters from A-Z a-z 0-9 space . _ : @ -"
ARGUMENT_RULE = "1 to 64 characters from A-Z a-z 0-9 _ . -"

_UNSTORABLE = re.compile("[\ud800-\udfff\x00]")


def unstorable_text(value, path: str = "") -> str | None:
    """Where in a parsed JSON value (keys included) a string holds a lone surrogate or a NUL, and what it is:
    None when every string is storable.

    >>> unstorable_text({"inputs": {"q": ["ok", "x\\ud800"]}})
    'a lone surrogate at inputs.q[1]'
    """
    if isinstance(value, str):
        found = _UNSTORABLE.search(value)
        if found is None:
            return None
        what = "a NUL character" if found.group() == "\x00" else "a lone surrogate"
        return f"{what} at {path or 'the body'}"
    if isinstance(value, dict):
        for key, item in value.items():
            shown = _UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(key))  # the answer must be storable too
            where = f"{path}.{shown}" if path else shown
            problem = unstorable_text(key, where) if isinstance(key, str) else None
            problem = problem or unstorable_text(item, where)
            if problem:
                return problem
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problem = unstorable_text(item, f"{path}[{index}]")
            if problem:
                return problem
    return None


def unstorable_refusal(value, path: str = "") -> str | None:
    """The refusal for text PostgreSQL cannot store (``unstorable_text``), or None when all of it can be."""
    problem = unstorable_text(value, path)
    return f"Text must be valid Unicode without NUL characters: {problem}." if problem else None
