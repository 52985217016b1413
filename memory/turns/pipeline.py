"""The write half of the turn loop for one queued turn: extract, ground, embed once, de-duplicate, write.

Model and embedding calls run before the write; the write runs in one (nested) transaction under
the space's lock, so the lock is never held while a model thinks. A failure of the model or the
embedding endpoint leaves the turn queued with a retry time (exponential backoff); after
``ENGRAM_TURN_MAX_ATTEMPTS`` it is marked failed with the error, visible to operators. Nothing is
half-written: the write either commits whole or not at all.

The queue: Turn rows hold the state (queued, processing, done, failed, next attempt);
django-tasks only wakes a worker. A lost wake-up is harmless: ``requeue_due_turns`` (run by the
worker loop and by ``manage.py process_turns``) picks up every turn that is due, including turns
whose worker died mid-way.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
from collections.abc import Mapping

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks import task

from memory import telemetry
from memory.dedup.writer import WriteOutcome, write_entries
from memory.extraction.engine import Candidate, CustomerText
from memory.extraction.grounding import CustomerSentences, Grounded, Rejected, Speaker, ground
from memory.extraction.offline import OfflineExtractor
from memory.extraction.registry import get_extractor
from memory.llm.budget import ModelTimeBudgetSpent
from memory.llm.errors import ModelUnavailable
from memory.models import EMBEDDING_DIMENSIONS, Message, Turn
from memory.telemetry import traced
from memory.text.analysis import languages_remembered, search_tokens, split_sentences
from memory.text.digests import keyword_digests
from memory.text.embeddings import EmbeddingUnavailable, stored_vector
from memory.text.vectors import engine_name, vectors_by_text, vocabulary_vectors
from memory.understanding.readings import SUBJECT_ATTRIBUTES
from tenants import scope
from tenants.models import Space
from tenants.space_settings import effective_settings
from tenants.tenant_admin import all_tenant_ids

logger = logging.getLogger(__name__)
TRANSIENT_ERRORS = (ModelUnavailable, EmbeddingUnavailable)
# A halfvec keeps ~3 significant digits: a stored unit vector's norm is 1 within ~1e-3.
UNIT_NORM_TOLERANCE = 1e-2


@dataclasses.dataclass
class MessageAnalysis:
    message: Message
    candidates: list[Candidate]
    sentences: list[str]


def analyse(
    messages: list[Message],
    known: Mapping[str, np.ndarray] | None = None,
    *,
    extractor=None,
    customer_name: str = "",
    admit_rewrites: bool = True,
) -> tuple[list[MessageAnalysis], list[list[Grounded]], list[Rejected]]:
    """Extract from each customer message, embed its entries in one call, ground each entry.

    Grounding compares an entry's meaning with the customer's sentences: first with the sentences at
    hand — an entry is often exactly the sentence it came from, and ``known`` holds texts already
    embedded for this space (the turn request stored its message's vector, which is its one sentence
    when it has one) — and only if that is not close enough with the message's other sentences, then
    embedded in one more call (the verdict is the same; sentences no entry needs are never embedded).
    A message without entries needs no comparison. All are embedded the same way, as passages.

    With ``admit_rewrites`` an entry may reword what it cites, call the customer by ``customer_name`` (the
    space's display name) and use a name the customer wrote in another message of the turn
    (``grounding.Speaker``); without, it must repeat the customer's words."""
    extractor = extractor or get_extractor()
    analyses = []
    for message in messages:
        text = message.content or ""
        candidates = extractor.extract(CustomerText(text=text, sent_at=message.sent_at))
        analyses.append(MessageAnalysis(message, candidates, split_sentences(text) or [text]))
    space_id = messages[0].space_id if messages else None
    entries = [c.content for a in analyses for c in a.candidates]
    if entries:
        known = {**vocabulary_vectors(space_id, entries, SUBJECT_ATTRIBUTES), **(known or {})}
    vector_of = {**(known or {}), **vectors_by_text(space_id, entries, known)} if entries else {}
    conversation = "\n".join(m.content or "" for m in messages)
    grounded_per_message, rejected = [], []
    for analysis in analyses:
        if analysis.candidates:
            kept, dropped = ground(
                analysis.candidates,
                np.stack([vector_of[c.content] for c in analysis.candidates]),
                analysis.message.content,
                _sentences_of(space_id, analysis.sentences, vector_of),
                Speaker.of(customer_name, conversation, analysis.message.sent_at),
                admit_rewrites=admit_rewrites,
            )
        else:
            kept, dropped = [], []
        grounded_per_message.append(kept)
        rejected.extend(dropped)
    return analyses, grounded_per_message, rejected


def _sentences_of(space_id, sentences: list[str], vector_of: Mapping[str, np.ndarray]) -> CustomerSentences:
    distinct = list(dict.fromkeys(sentences))
    at_hand = [s for s in distinct if s in vector_of]
    rest = [s for s in distinct if s not in vector_of]
    vectors = np.stack([vector_of[s] for s in at_hand]) if at_hand else np.zeros((0, EMBEDDING_DIMENSIONS), np.float32)

    def embed_rest() -> np.ndarray:
        fresh = vectors_by_text(space_id, rest)
        return np.stack([fresh[s] for s in rest])

    return CustomerSentences(vectors, embed_rest if rest else None)


def cap_entries(grounded_per_message: list[list[Grounded]], limit: int) -> tuple[list[list[Grounded]], list[Rejected]]:
    """At most ``limit`` entries a customer message, in the order the extractor gave them: one message cannot
    flood a space (a model once answered one sentence with 200 entries), and a transcript of many messages
    keeps what each of them gave. What is over the limit is listed on the turn, never dropped silently."""
    kept, over = [], []
    for grounded in grounded_per_message:
        kept.append(grounded[:limit])
        over += [Rejected(g.candidate, f"over the limit of {limit} entries per message") for g in grounded[limit:]]
    return kept, over


# What a finished attempt records on the turn.
RESULT_FIELDS = ("status", "created_ids", "merged_ids", "superseded_ids", "held_back_ids", "rejected", "error",
                 "next_attempt_at")  # fmt: skip


def _space_of(turn: Turn) -> Space:
    """The turn's space with its tenant (the settings read both): the one the caller loaded, if it did."""
    if Turn.space.is_cached(turn) and Space.tenant.is_cached(turn.space):
        return turn.space
    return Space.objects.select_related("tenant").get(pk=turn.space_id)


@traced("update_memory engram", operation="update_memory", records=lambda t: len(t.created_ids) + len(t.merged_ids))
def process_turn(turn: Turn, known_vectors: Mapping[str, np.ndarray] | None = None, *, extractor=None) -> Turn:
    """Run the pipeline for a turn inside the current (space-scoped) transaction and record the result.
    The caller's transaction is the write's: ``_attempt`` opens it, so a failure leaves nothing behind."""
    space = _space_of(turn)
    space_settings = effective_settings(space)
    messages = list(
        Message.objects.filter(space_id=turn.space_id, id__in=turn.message_ids, role=Message.Role.CUSTOMER)
        .select_related("session")
        .order_by("sent_at", "id")
    )
    # A forget request is never mined: it must not re-create what it just deleted.
    to_mine = [] if turn.forget_handled else [m for m in messages if m.content]
    known = {**stored_vectors(to_mine), **(known_vectors or {})}
    analyses, grounded_per_message, rejected = analyse(
        to_mine,
        known,
        extractor=extractor,
        customer_name=space.display_name,
        admit_rewrites=space_settings["admit_rewrites"],
    )
    grounded_per_message, over_limit = cap_entries(grounded_per_message, space_settings["max_entries_per_message"])
    rejected += over_limit
    outcome = WriteOutcome()
    for analysis, grounded in zip(analyses, grounded_per_message, strict=True):
        part = write_entries(
            space=space,
            settings=space_settings,
            session=analysis.message.session,
            message=analysis.message,
            grounded=grounded,
        )
        outcome.created += [i for i in part.created if i not in outcome.created]
        outcome.merged += [i for i in part.merged if i not in outcome.merged and i not in outcome.created]
        outcome.superseded += part.superseded
        outcome.held_back += part.held_back
    turn.status = Turn.Status.DONE
    turn.created_ids, turn.merged_ids, turn.superseded_ids = outcome.created, outcome.merged, outcome.superseded
    turn.held_back_ids = outcome.held_back
    turn.rejected = json.dumps([{"content": r.candidate.content, "reason": r.reason} for r in rejected])
    turn.error = ""
    turn.next_attempt_at = None
    turn.save(update_fields=[*RESULT_FIELDS, "updated_at"])
    if space_settings["keep_transcripts"] and not turn.forget_handled:
        kept = [m for m in messages if m.content]
        for message in kept:
            message.keyword_digests = keyword_digests(space.id, search_tokens(message.content))
            for field, value in Message.NO_PENDING_VECTOR.items():  # used: vectors of the transcript are not kept
                setattr(message, field, value)
        Message.objects.bulk_update(kept, ["keyword_digests", *Message.NO_PENDING_VECTOR])
    else:
        # The turn record is all that needs the text; transcripts are not kept.
        Message.objects.filter(pk__in=[m.pk for m in messages]).update(**Message.TEXT_DROPPED)
    return turn


def stored_vectors(messages: list[Message]) -> dict[str, np.ndarray]:
    """The vectors the turn request stored with these messages, keyed by each row's own text: a vector
    serves only the exact text it was stored with (an entry that is that sentence), never another.
    One that is not a unit vector (the embedders normalise, the space's transform is orthogonal) was
    not written by the turn request and is not trusted, nor is one another engine made (the model
    changed since the message was stored): the text is embedded again."""
    found = {}
    engine = engine_name()
    for message in messages:
        if message.pending_embedding is None or not message.content or message.pending_embedding_model != engine:
            continue
        vector = stored_vector(message.pending_embedding)
        if np.isfinite(vector).all() and abs(float(np.linalg.norm(vector)) - 1.0) <= UNIT_NORM_TOLERANCE:
            found[message.content] = vector
    return found


def retry_delay(attempts: int) -> datetime.timedelta:
    seconds = settings.ENGRAM_TURN_RETRY_BASE_SECONDS * (2 ** max(0, attempts - 1))
    return datetime.timedelta(seconds=min(seconds, settings.ENGRAM_TURN_RETRY_MAX_SECONDS))


def waited_for_the_model(turn: Turn) -> datetime.timedelta:
    return timezone.now() - turn.created_at


def record_failure(turn: Turn, error: Exception) -> Turn:
    """Schedule a retry; or, when the chat model has been down past ENGRAM_MODEL_WAIT_SECONDS, derive the
    turn with the offline engine (a model outage delays memory, never loses it); or mark the turn failed
    once its attempts are used up on anything else (a bug: visible, and re-queued by hand)."""
    turn.error = f"{error}"[:2000]
    model_down = isinstance(error, ModelUnavailable) and not isinstance(error, ModelTimeBudgetSpent)
    if model_down and waited_for_the_model(turn).total_seconds() >= settings.ENGRAM_MODEL_WAIT_SECONDS:
        return derive_offline(turn, error)
    if turn.attempts >= settings.ENGRAM_TURN_MAX_ATTEMPTS and not model_down:
        turn.status = Turn.Status.FAILED
        turn.next_attempt_at = None
    else:
        turn.status = Turn.Status.QUEUED
        # A request that used up its model time hands the turn to the worker at once: the model is
        # slow, not failing, and the worker has no request budget.
        delay = datetime.timedelta(0) if isinstance(error, ModelTimeBudgetSpent) else retry_delay(turn.attempts)
        turn.next_attempt_at = timezone.now() + delay
    turn.save(update_fields=["status", "error", "next_attempt_at", "updated_at"])
    if turn.status == Turn.Status.QUEUED:
        enqueue_turn(turn, run_after=turn.next_attempt_at)
    else:
        # No attempt will use the message's vector any more (a retry keeps it).
        Message.objects.filter(space_id=turn.space_id, pk__in=turn.message_ids).update(**Message.NO_PENDING_VECTOR)
    return turn


def derive_offline(turn: Turn, error: Exception) -> Turn:
    """The turn's memories from the offline engine, marked so: the chat model stayed down too long."""
    waited = int(waited_for_the_model(turn).total_seconds())
    note = f"The chat model was unavailable for {waited} s ({error}); derived by the offline engine."
    try:
        with transaction.atomic(), languages_remembered(turn.space_id):
            process_turn(turn, extractor=OfflineExtractor())
            turn.derived_offline, turn.error = True, note[:2000]
            turn.save(update_fields=["derived_offline", "error", "updated_at"])
            return turn
    except Exception as exc:  # the offline engine failed too (its embedding, a bug): keep it for a retry by hand
        logger.exception("turn %s: the offline fallback failed", turn.id)
        turn.refresh_from_db()
        turn.status, turn.error, turn.next_attempt_at = Turn.Status.FAILED, f"{exc}"[:2000], None
        turn.save(update_fields=["status", "error", "next_attempt_at", "updated_at"])
        return turn


def requeue_failed(turns) -> int:
    """Failed turns queued again, due now, with a fresh count of attempts (their messages are kept:
    a failed turn's text is dropped only with its vector, never before it is derived)."""
    count = 0
    for turn in turns.filter(status=Turn.Status.FAILED).select_for_update(skip_locked=True):
        turn.status, turn.attempts, turn.next_attempt_at = Turn.Status.QUEUED, 0, timezone.now()
        turn.save(update_fields=["status", "attempts", "next_attempt_at", "updated_at"])
        enqueue_turn(turn)
        count += 1
    return count


def _claim(turn: Turn) -> None:
    turn.attempts += 1
    turn.status = Turn.Status.PROCESSING
    turn.save(update_fields=["attempts", "status", "updated_at"])


def _attempt(turn: Turn, known_vectors: Mapping[str, np.ndarray] | None = None) -> Turn:
    """Run the pipeline once; any failure leaves the turn stored with a retry time, or failed."""
    try:
        with transaction.atomic(), languages_remembered(turn.space_id):
            return process_turn(turn, known_vectors)
    except TRANSIENT_ERRORS as exc:
        logger.warning("turn %s attempt %s failed: %s", turn.id, turn.attempts, exc)
        return record_failure(turn, exc)
    except Exception as exc:  # a bug must not lose or wedge the turn: bounded retries, then failed and visible
        logger.exception("turn %s attempt %s crashed", turn.id, turn.attempts)
        return record_failure(turn, exc)


def attempt_turn(turn: Turn, *, known_vectors: Mapping[str, np.ndarray] | None = None) -> Turn:
    """One attempt, inside the caller's space-scoped transaction (the API's ?wait=true uses this).
    ``known_vectors``: texts the caller embedded for this space already (the turn's message)."""
    _claim(turn)
    return _attempt(turn, known_vectors)


def run_turn(*, tenant_id: str, space_id: str, turn_id: str) -> str:
    """The worker's entry point: claim the turn, run one attempt, report its status."""
    with scope.tenant_scope(tenant_id, space_id):
        turn = Turn.objects.select_for_update(skip_locked=True).filter(pk=turn_id).first()
        if turn is None:
            return "gone-or-locked"
        if turn.status not in (Turn.Status.QUEUED,):
            return turn.status
        if turn.next_attempt_at and turn.next_attempt_at > timezone.now():
            return "not-due"
        # Claimed in its own commit, so a crash mid-pipeline leaves "processing" for the lease sweep.
        _claim(turn)
    with scope.tenant_scope(tenant_id, space_id):
        # Only the turn's row is locked; its space and tenant are read with it for the settings.
        claimed = Turn.objects.select_for_update(of=("self",)).select_related("space__tenant").get(pk=turn_id)
        return _attempt(claimed).status


# A turn left "processing" longer than this is taken to have lost its worker.
PROCESSING_LEASE = datetime.timedelta(minutes=10)


def enqueue_turn(turn: Turn, *, run_after: datetime.datetime | None = None) -> None:
    """Queue the pipeline for ``turn``, in the caller's transaction (committed with the turn), with the caller's
    trace context, so the worker's trace links back to the request that stored the turn."""
    task_ = process_turn_task.using(run_after=run_after) if run_after else process_turn_task
    trace_context = telemetry.current_trace_context()
    task_.enqueue(
        str(turn.tenant_id),
        str(turn.space_id),
        str(turn.id),
        **({"trace_context": trace_context} if trace_context else {}),
    )


@task()
def process_turn_task(tenant_id: str, space_id: str, turn_id: str, trace_context: dict[str, str] | None = None) -> str:
    with telemetry.linked_root_span(
        "engram.turn.process",
        trace_context,
        **{telemetry.TENANT_ID: tenant_id, telemetry.SPACE_ID: space_id, telemetry.TURN_ID: turn_id},
    ):
        return run_turn(tenant_id=tenant_id, space_id=space_id, turn_id=turn_id)


def requeue_due_turns() -> int:
    """Queue every turn that is due: waiting for a retry, or stuck 'processing' past its lease."""
    now = timezone.now()
    count = 0
    for tenant_id in all_tenant_ids():
        with scope.tenant_scope(tenant_id), transaction.atomic():
            stale = Turn.objects.filter(status=Turn.Status.PROCESSING, updated_at__lt=now - PROCESSING_LEASE)
            stale.update(status=Turn.Status.QUEUED, next_attempt_at=now)
            due = Turn.objects.filter(status=Turn.Status.QUEUED, next_attempt_at__lte=now)
            for turn in due.select_for_update(skip_locked=True):
                turn.next_attempt_at = None
                turn.save(update_fields=["next_attempt_at", "updated_at"])
                enqueue_turn(turn)
                count += 1
    return count
