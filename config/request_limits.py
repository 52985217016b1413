"""Refuse oversized API request bodies with 413 before anything reads them."""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse

# Routes that legitimately carry more than the default limit (a whole transcript, an import file).
LARGER_LIMITS_BY_SUFFIX = {
    "/ingest": 20 * 1024 * 1024,
    "/import": 64 * 1024 * 1024,
    # Episodes may carry a file input (5 MiB, base64-encoded in JSON).
    "/episodes": 8 * 1024 * 1024,
    "/episodes/recall": 8 * 1024 * 1024,
}


def body_limit_for(path: str) -> int:
    for suffix, limit in LARGER_LIMITS_BY_SUFFIX.items():
        if path.rstrip("/").endswith(suffix):
            return limit
    return settings.ENGRAM_MAX_REQUEST_BYTES


def too_large_response(limit: int) -> JsonResponse:
    return JsonResponse(
        {
            "error": {
                "code": "request_too_large",
                "message": f"The request body is larger than {limit} bytes.",
                "details": {"limit_bytes": limit},
            }
        },
        status=413,
    )


class RequestBodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/"):
            limit = body_limit_for(request.path)
            try:
                declared = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                declared = 0
            if declared > limit:
                return too_large_response(limit)
            if declared == 0 and request.META.get("HTTP_TRANSFER_ENCODING", "").lower() == "chunked":
                # No declared length: read at most one byte past the limit to decide.
                body = request.read(limit + 1)
                if len(body) > limit:
                    return too_large_response(limit)
                request._body = body
        return self.get_response(request)
