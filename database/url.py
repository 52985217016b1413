"""Turn a ``DATABASE_URL`` (``postgres://user:password@host:port/name?sslmode=...``) into Django settings.

>>> database_settings_from_url("postgres://app:s3cret@db.internal:6432/engram?sslmode=require")["PORT"]
'6432'
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit


def database_settings_from_url(url: str) -> dict:
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ValueError(f"DATABASE_URL must start with postgres:// or postgresql://, not {parts.scheme}://")
    query = dict(parse_qsl(parts.query))
    host = query.pop("host", None) or unquote(parts.hostname or "")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(parts.port or ""),
        "OPTIONS": query,
    }
