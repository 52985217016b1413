"""Per-API-key rate limits: a key over its budget gets 429 with Retry-After (DRF's throttling).

The budget is counted in the database (``tenants.request_budget``), so every server process counts
against the same limit, in one statement outside the request's transaction.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from tenants import request_budget


class PerApiKeyRateThrottle(BaseThrottle):
    def allow_request(self, request, view):
        prefix = getattr(getattr(request, "auth", None), "prefix", None)
        if prefix is None:
            return True  # console sessions and unauthenticated requests are limited elsewhere
        self.seconds_to_wait = request_budget.spend(prefix, request_budget.Rate.parse(settings.ENGRAM_API_RATE_LIMIT))
        return self.seconds_to_wait == 0.0

    def wait(self):
        return self.seconds_to_wait
