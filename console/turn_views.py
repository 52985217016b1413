"""What one turn did, and a session's kept transcript: the operator's "why does it know this?".

Roles that do not read memory text see the same pages with ids, kinds, reasons and times only.
"""

from __future__ import annotations

import re

from django.http import Http404
from django.shortcuts import render

from console.access import console_view, may_read_memory_text
from memory.investigation import transcript_of, turn_account
from memory.turns import TurnNotFound, find_turn
from tenants import spaces
from tenants.space_settings import effective_settings


def _keeps_transcripts(space) -> bool:
    return bool(effective_settings(space).get("keep_transcripts"))


def reason_class(reason: str) -> str:
    """A rejection reason without its details: grounding names the words, numbers or names an entry
    added, and the distance it kept, which roles that read no memory text must not see.

    >>> reason_class("adds a number the customer did not say: 4242")
    'adds a number the customer did not say'
    >>> reason_class("only 40% of its words are in the customer's message (missing: company, furniture)")
    "only 40% of its words are in the customer's message"
    """
    return re.split(r": | \(", reason, maxsplit=1)[0].strip()


@console_view()
def turn_detail(request, external_id, turn_id):
    space = spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)
    try:
        turn = find_turn(space=space, turn_id=turn_id)
    except TurnNotFound:
        raise Http404("No such turn.") from None
    account = turn_account(turn)
    show_text = may_read_memory_text(request)
    if not show_text:
        for section in ("created", "merged", "superseded"):
            for brief in account[section]:
                brief["content"] = None
        account["rejected"] = [
            {"content": None, "reason": reason_class(r.get("reason", ""))} for r in account["rejected"]
        ]
    # Not "messages": base.html lists the messages framework's notices under that name.
    said = [
        {"id": m.id, "role": m.role, "sent_at": m.sent_at, "digest": m.digest,
         "content": m.content if show_text else None, "kept": m.content is not None}
        for m in account["messages"]
    ]  # fmt: skip
    context = {"space": space, "turn": turn, "account": account, "said": said, "show_text": show_text,
               "keeps_transcripts": _keeps_transcripts(space)}  # fmt: skip
    return render(request, "console/turn.html", context)


@console_view()
def session_transcript(request, external_id, session_id):
    space = spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)
    session, messages = transcript_of(space=space, session_external_id=session_id)
    if session is None:
        raise Http404("No such session.")
    show_text = may_read_memory_text(request)
    rows = [
        {"id": m.id, "role": m.role, "sent_at": m.sent_at, "digest": m.digest,
         "content": m.content if show_text else None, "kept": m.content is not None}
        for m in messages
    ]  # fmt: skip
    context = {"space": space, "session": session, "rows": rows, "show_text": show_text}
    return render(request, "console/transcript.html", context)
