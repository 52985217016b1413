"""How long the chat model may think for one API request, all its calls together.

A turn request may call the model three times (forget judgement, query analysis and, with
``?wait=true``, extraction); each call has the client's timeout, but together they must not keep
the caller waiting a minute. ``receive_turn`` gives the request it serves ``REQUEST_MODEL_SECONDS``
of model time; every call in that request may use at most what is left, without client-side
retries, and the time it took is deducted. Once spent, a call fails at once as
``ModelTimeBudgetSpent`` (a model failure: the turn is left to the worker, recall and forgetting
use the rule set). Outside a request (the worker, management commands) no budget applies: each
call has the client's own timeout and retries.

The budget lives in a context variable that is reset when every request starts and finishes, so
one request's budget never reaches the next one served by the same thread.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import time

from django.core.signals import request_finished, request_started
from django.dispatch import receiver

from memory.llm.errors import ModelUnavailable

REQUEST_MODEL_SECONDS = 8.0
MIN_CALL_SECONDS = 0.5  # less than this left: do not start a call that cannot finish

# Seconds of model time left: None outside a request, infinity in a request without a budget.
_left: contextvars.ContextVar[float | None] = contextvars.ContextVar("engram_model_seconds_left", default=None)


class ModelTimeBudgetSpent(ModelUnavailable):
    """This request has used up its model time; the work is left to the worker."""


@receiver(request_started)
def _request_started(**_kwargs) -> None:
    _left.set(math.inf)


@receiver(request_finished)
def _request_finished(**_kwargs) -> None:
    _left.set(None)


def start_request_budget(seconds: float | None = None) -> None:
    """Bound the model time of the rest of the current request (the first call wins; no-op outside one)."""
    if _left.get() == math.inf:
        _left.set(REQUEST_MODEL_SECONDS if seconds is None else seconds)


@contextlib.contextmanager
def metered_call(default_timeout: float):
    """Around one model call: yields its timeout (None: no budget, use the client's own) and deducts
    the time the call took from the budget."""
    left = _left.get()
    if left is None or left == math.inf:
        yield None
        return
    if left < MIN_CALL_SECONDS:
        raise ModelTimeBudgetSpent("the model time of this request is used up; the worker carries on")
    started = time.monotonic()
    try:
        yield min(default_timeout, left)
    finally:
        _left.set(left - (time.monotonic() - started))
