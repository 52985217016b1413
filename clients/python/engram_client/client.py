"""``Engram`` (sync) and ``AsyncEngram``: the API's operations over httpx2, with retries and pagination.

>>> with Engram("http://127.0.0.1:8000", api_key="eng_...") as engram:
...     turn = engram.post_turn("customer-42", "I moved to Lyon last month.")
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any

import httpx2

from engram_client._operations import Json, Operations
from engram_client._requests import ApiRequest
from engram_client.errors import EngramError, error_from_response
from engram_client.retries import RETRYABLE_STATUSES, backoff_seconds, retry_after_seconds

DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF_SECONDS = 0.5


def _headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}", "Accept": "application/json", "User-Agent": "engram-client/0.1"}


def _request_kwargs(request: ApiRequest) -> dict[str, Any]:
    headers = dict(request.headers or {})
    if request.content_type:
        headers["Content-Type"] = request.content_type
    kwargs: dict[str, Any] = {"params": request.params, "headers": headers}
    if request.content is not None:
        kwargs["content"] = request.content
    elif request.json is not None:
        kwargs["json"] = request.json
    return kwargs


def _result(request: ApiRequest, response: httpx2.Response) -> Any:
    if response.status_code >= 400:
        try:
            body = response.json()
        except ValueError:
            body = response.text
        raise error_from_response(response.status_code, body, retry_after_seconds(response.headers.get("Retry-After")))
    if request.expect == "none":
        return None
    if request.expect == "bytes":
        return response.content
    return response.json()


def _should_retry(request: ApiRequest, attempt: int, max_retries: int, status: int | None) -> bool:
    """A 429/503 was not carried out, so any request may be resent; a lost connection only an idempotent one."""
    if attempt > max_retries:
        return False
    return status in RETRYABLE_STATUSES if status is not None else request.idempotent


def _page_request(request: ApiRequest, limit: int, offset: int) -> ApiRequest:
    return ApiRequest(
        request.method, request.path, params={**(request.params or {}), "limit": limit, "offset": offset},
        idempotent=True,
    )  # fmt: skip


class Engram(Operations[Any, Iterator[Json]]):
    """The synchronous client. Methods return the API's JSON (dicts and lists); errors raise ``EngramError``."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff: float = DEFAULT_BACKOFF_SECONDS,
        transport: httpx2.BaseTransport | None = None,
    ) -> None:
        self.max_retries = max_retries
        self.backoff = backoff
        self._http = httpx2.Client(
            base_url=base_url.rstrip("/"), headers=_headers(api_key), timeout=timeout, transport=transport
        )

    def _send(self, request: ApiRequest) -> Any:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.request(request.method, request.path, **_request_kwargs(request))
            except httpx2.TransportError:
                if not _should_retry(request, attempt, self.max_retries, None):
                    raise
                time.sleep(backoff_seconds(attempt, None, self.backoff))
                continue
            if not _should_retry(request, attempt, self.max_retries, response.status_code):
                return _result(request, response)
            retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            time.sleep(backoff_seconds(attempt, retry_after, self.backoff))

    def _paginate(self, request: ApiRequest, page_size: int) -> Iterator[Json]:
        offset = 0
        while True:
            page = self._send(_page_request(request, page_size, offset))
            yield from page["results"]
            offset += len(page["results"])
            if not page.get("next") or not page["results"]:
                return

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Engram:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncEngram(Operations[Awaitable[Any], AsyncIterator[Json]]):
    """The asynchronous client: the same methods, awaited (lists are ``async for`` iterators)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff: float = DEFAULT_BACKOFF_SECONDS,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.max_retries = max_retries
        self.backoff = backoff
        self._http = httpx2.AsyncClient(
            base_url=base_url.rstrip("/"), headers=_headers(api_key), timeout=timeout, transport=transport
        )

    async def _send(self, request: ApiRequest) -> Any:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.request(request.method, request.path, **_request_kwargs(request))
            except httpx2.TransportError:
                if not _should_retry(request, attempt, self.max_retries, None):
                    raise
                await asyncio.sleep(backoff_seconds(attempt, None, self.backoff))
                continue
            if not _should_retry(request, attempt, self.max_retries, response.status_code):
                return _result(request, response)
            retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            await asyncio.sleep(backoff_seconds(attempt, retry_after, self.backoff))

    async def _paginate(self, request: ApiRequest, page_size: int) -> AsyncIterator[Json]:
        offset = 0
        while True:
            page = await self._send(_page_request(request, page_size, offset))
            for item in page["results"]:
                yield item
            offset += len(page["results"])
            if not page.get("next") or not page["results"]:
                return

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncEngram:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


__all__ = ["AsyncEngram", "Engram", "EngramError"]
