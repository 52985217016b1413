"""Every operation of the Engram API, written once for the sync and the async client.

A method builds an ``ApiRequest`` and hands it to ``_send`` (or ``_paginate`` for lists); the sync client
returns the answer, the async client an awaitable (or an async iterator).
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Generic, Literal, TypeVar

from engram_client._requests import ApiRequest, query_flags, segment, space_path, without_none

Result = TypeVar("Result")
Pages = TypeVar("Pages")
Json = dict[str, Any]


class Operations(ABC, Generic[Result, Pages]):
    """The transport-independent half: the sync and async clients supply how a request is sent."""

    @abstractmethod
    def _send(self, request: ApiRequest) -> Result: ...

    @abstractmethod
    def _paginate(self, request: ApiRequest, page_size: int) -> Pages: ...

    # Spaces
    def iter_spaces(self, *, page_size: int = 100) -> Pages:
        return self._paginate(ApiRequest("GET", "/api/v1/spaces", idempotent=True), page_size)

    def create_space(
        self,
        external_id: str,
        *,
        kind: Literal["end_user", "shared"] | None = None,
        display_name: str | None = None,
        settings: Json | None = None,
        key_id: str | None = None,
    ) -> Result:
        body = without_none(
            external_id=external_id, kind=kind, display_name=display_name, settings=settings, key_id=key_id
        )
        return self._send(ApiRequest("POST", "/api/v1/spaces", json=body))

    def get_space(self, space: str) -> Result:
        return self._send(ApiRequest("GET", space_path(space), idempotent=True))

    def update_space(self, space: str, *, display_name: str | None = None, settings: Json | None = None) -> Result:
        body = without_none(display_name=display_name, settings=settings)
        return self._send(ApiRequest("PATCH", space_path(space), json=body, idempotent=True))

    def delete_space(self, space: str) -> Result:
        """Erase the space: every row and its key (admin scope)."""
        return self._send(ApiRequest("DELETE", space_path(space), expect="none", idempotent=True))

    # The turn loop
    def post_turn(
        self,
        space: str,
        message: str,
        *,
        session_id: str | None = None,
        message_id: str | None = None,
        channel: str | None = None,
        at: str | None = None,
        create_space: bool = False,
        wait: bool = False,
        provenance: bool | None = None,
        max_chars: int | None = None,
    ) -> Result:
        """Store the customer's message; the answer carries what is recalled for it (``memories``, ``prompt``;
        ``max_chars``: the room for them, filled best first, ``left_out`` counting what did not fit).

        Without ``message_id`` the client makes one, so a retry after a lost answer stores the message once:
        the server answers a replay with the turn it created the first time.
        """
        body = without_none(
            message=message,
            session_id=session_id,
            message_id=message_id or f"client-{uuid.uuid4().hex}",
            channel=channel,
            at=at,
            create_space=create_space,
            provenance=provenance,
            max_chars=max_chars,
        )
        params = query_flags(wait=True) if wait else None
        return self._send(ApiRequest("POST", space_path(space, "turns"), params=params, json=body, idempotent=True))

    def post_reply(self, space: str, turn_id: str, content: str) -> Result:
        """Record the agent's reply to a turn (context only, never mined)."""
        return self._send(ApiRequest("POST", space_path(space, "turns", turn_id, "reply"), json={"content": content}))

    def ingest(
        self,
        space: str,
        messages: Sequence[Json],
        *,
        session_id: str | None = None,
        create_space: bool = False,
        wait: bool = False,
    ) -> Result:
        """Ingest a transcript (``[{"role", "content", "id"?, "at"?}]``) as one turn; idempotent."""
        body = without_none(messages=list(messages), session_id=session_id, create_space=create_space)
        params = query_flags(wait=True) if wait else None
        return self._send(ApiRequest("POST", space_path(space, "ingest"), params=params, json=body, idempotent=True))

    def get_turn(self, turn_id: str) -> Result:
        return self._send(ApiRequest("GET", f"/api/v1/turns/{segment(turn_id)}", idempotent=True))

    def retry_turn(self, turn_id: str) -> Result:
        """Queue a failed turn again with fresh attempts (admin scope); the turn, ``queued``."""
        return self._send(ApiRequest("POST", f"/api/v1/turns/{segment(turn_id)}/retry"))

    # Memories
    def iter_memories(
        self,
        space: str,
        *,
        kind: str | None = None,
        topic: str | None = None,
        include_superseded: bool | None = None,
        page_size: int = 100,
    ) -> Pages:
        params = query_flags(kind=kind, topic=topic, include_superseded=include_superseded)
        request = ApiRequest("GET", space_path(space, "memories"), params=params, idempotent=True)
        return self._paginate(request, page_size)

    def get_memory(self, space: str, memory_id: str) -> Result:
        return self._send(ApiRequest("GET", space_path(space, "memories", memory_id), idempotent=True))

    def memory_history(self, space: str, memory_id: str) -> Result:
        """The versions this memory superseded, newest first (a list)."""
        return self._send(ApiRequest("GET", space_path(space, "memories", memory_id, "history"), idempotent=True))

    def update_memory(
        self, space: str, memory_id: str, *, content: str | None = None, topic: str | None = None,
        importance: float | None = None,
    ) -> Result:  # fmt: skip
        body = without_none(content=content, topic=topic, importance=importance)
        return self._send(ApiRequest("PATCH", space_path(space, "memories", memory_id), json=body, idempotent=True))

    def delete_memory(self, space: str, memory_id: str) -> Result:
        return self._send(
            ApiRequest("DELETE", space_path(space, "memories", memory_id), expect="none", idempotent=True)
        )

    def restore_memory(self, space: str, memory_id: str) -> Result:
        """Make an earlier, superseded version current again (admin scope); the restored memory. Not resent
        after a dropped connection: a second restore of the same version is a 409 ``conflict``."""
        return self._send(ApiRequest("POST", space_path(space, "memories", memory_id, "restore")))

    def recall(
        self,
        space: str,
        query: str,
        *,
        limit: int | None = None,
        kinds: Sequence[str] | None = None,
        synthesize: bool | None = None,
        provenance: bool | None = None,
        max_chars: int | None = None,
    ) -> Result:
        """What is close enough to ``query``; ``provenance=True`` adds each memory's ``source``;
        ``max_chars``: the room for prompt lines, filled best first (``left_out`` counts what did not fit)."""
        body = without_none(
            query=query,
            limit=limit,
            kinds=list(kinds) if kinds else None,
            synthesize=synthesize,
            provenance=provenance,
            max_chars=max_chars,
        )
        return self._send(ApiRequest("POST", space_path(space, "recall"), json=body, idempotent=True))

    def forget(self, space: str, utterance: str, *, dry_run: bool = False) -> Result:
        body = {"utterance": utterance, "dry_run": dry_run}
        return self._send(ApiRequest("POST", space_path(space, "forget"), json=body, idempotent=dry_run))

    # Shared spaces: episodes and escalations
    def iter_episodes(self, space: str, *, kind: Literal["episode", "resolution"] | None = None,
                      page_size: int = 100) -> Pages:  # fmt: skip
        request = ApiRequest("GET", space_path(space, "episodes"), params=query_flags(kind=kind), idempotent=True)
        return self._paginate(request, page_size)

    def create_episode(self, space: str, **body: Any) -> Result:
        """Store a case: ``inputs``, ``output``, ``outcome``; optionally ``feedback``, ``agent``, ``on_duplicate``…"""
        return self._send(ApiRequest("POST", space_path(space, "episodes"), json=body))

    def get_episode(self, space: str, episode_id: str) -> Result:
        return self._send(ApiRequest("GET", space_path(space, "episodes", episode_id), idempotent=True))

    def update_episode(self, space: str, episode_id: str, **body: Any) -> Result:
        return self._send(ApiRequest("PATCH", space_path(space, "episodes", episode_id), json=body, idempotent=True))

    def delete_episode(self, space: str, episode_id: str) -> Result:
        return self._send(
            ApiRequest("DELETE", space_path(space, "episodes", episode_id), expect="none", idempotent=True)
        )

    def recall_episodes(
        self, space: str, inputs: Json, *, agent: str | None = None, limit: int | None = None
    ) -> Result:
        body = without_none(inputs=inputs, agent=agent, limit=limit)
        return self._send(ApiRequest("POST", space_path(space, "episodes", "recall"), json=body, idempotent=True))

    def resolve_escalation(self, space: str, **body: Any) -> Result:
        """Store a person's resolution: ``input``, ``resolution_comment``, ``outcome``, ``agent``?…"""
        return self._send(ApiRequest("POST", space_path(space, "escalations", "resolve"), json=body))

    def match_escalation(self, space: str, input: Any, *, agent: str | None = None) -> Result:
        body = without_none(input=input, agent=agent)
        return self._send(ApiRequest("POST", space_path(space, "escalations", "match"), json=body, idempotent=True))

    # Export and import
    def export_space(self, space: str, *, passphrase: str | None = None) -> Result:
        """The space as NDJSON bytes (admin scope); every line after the header sealed when ``passphrase`` is given."""
        headers = {"X-Engram-Passphrase": passphrase} if passphrase else None
        return self._send(
            ApiRequest("GET", space_path(space, "export"), headers=headers, expect="bytes", idempotent=True)
        )

    def import_space(self, space: str, data: bytes) -> Result:
        """Import an export file into this space (admin scope); importing the same file again skips every record."""
        request = ApiRequest(
            "POST", space_path(space, "import"), content=data, content_type="application/x-ndjson", idempotent=True
        )
        return self._send(request)

    # Deletion audit
    def iter_deletions(
        self, *, space: str | None = None, cause: str | None = None, since: str | None = None,
        until: str | None = None, page_size: int = 100,
    ) -> Pages:  # fmt: skip
        params = query_flags(space=space, cause=cause, since=since, until=until)
        return self._paginate(ApiRequest("GET", "/api/v1/deletions", params=params, idempotent=True), page_size)

    def check_deletion(self, space: str, text: str) -> Result:
        body = {"space": space, "text": text}
        return self._send(ApiRequest("POST", "/api/v1/deletions/check", json=body, idempotent=True))
