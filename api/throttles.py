"""Per-API-key rate limits: a key over its budget gets 429 with Retry-After (DRF's throttling).

Counts live in Django's cache, which is the database (settings.CACHES): every server process
counts against the same budget.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle


class PerApiKeyRateThrottle(SimpleRateThrottle):
    scope = "api_key"

    def get_rate(self):
        return settings.ENGRAM_API_RATE_LIMIT

    def get_cache_key(self, request, view):
        api_key = getattr(request, "auth", None)
        prefix = getattr(api_key, "prefix", None)
        if prefix is None:
            return None  # console sessions and unauthenticated requests are limited elsewhere
        return self.cache_format % {"scope": self.scope, "ident": prefix}
