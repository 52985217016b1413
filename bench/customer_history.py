"""A customer's history told to a fresh space through the turn pipeline, one message a session, a day apart:
how the evaluations and benchmarks that build accounts from written histories store them."""

from __future__ import annotations

import datetime


def tell_history(tenant, external_id: str, messages: list[str], *, start: datetime.datetime, numbered: bool = False):
    """The new space. ``numbered``: message ``i`` carries the caller's message id ``h{i}``, so a row's source
    says which line it was drawn from."""
    from memory.turns import intake
    from memory.turns.sequence import take_transcript
    from tenants import scope, spaces

    with scope.tenant_scope(tenant):
        space = spaces.create_space(tenant=tenant, external_id=external_id)
    for number, message in enumerate(messages):
        incoming = intake.IncomingMessage(
            role="customer",
            content=message,
            message_id=f"h{number}" if numbered else "",
            sent_at=start + datetime.timedelta(days=number),
        )
        with scope.tenant_scope(tenant, space):
            take_transcript(wait=True, space=space, session_id=f"session-{number}", messages=[incoming])
    return space
