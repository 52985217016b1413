"""The result of a turn as the API and the console show it."""

from __future__ import annotations

import json

from memory.models import Memory, Turn


def _briefs(ids) -> list[dict]:
    rows = {m.id: m for m in Memory.objects.filter(pk__in=ids)}
    return [
        {"id": m.id, "kind": m.kind, "content": m.content, "topic": m.topic}
        for i in ids
        if (m := rows.get(i)) is not None
    ]


def turn_result(turn: Turn, *, detailed: bool = True) -> dict:
    result = {"turn_id": turn.id, "session_id": turn.session.external_id, "status": turn.status}
    if detailed:
        result.update(
            created=_briefs(turn.created_ids),
            merged=_briefs(turn.merged_ids),
            superseded=list(turn.superseded_ids),
            held_back=list(turn.held_back_ids),
            rejected=json.loads(turn.rejected) if turn.rejected else [],
            error=turn.error,
            derived_offline=turn.derived_offline,
        )
    return result
