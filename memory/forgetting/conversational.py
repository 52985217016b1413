"""Forgetting in conversation: the judge decides, code bounds the damage, the result is read back.

Code, never the model, sets how much a decision can delete:
- candidates come only from this space, and only within the space's forget floor (a cosine
  distance stricter than recall): similarity search always has a nearest row, and without the
  floor "forget what you know about X" would delete whatever ranked first;
- and only within a small margin of the best match (one request is about one thing);
- at most ``max_deletions_per_request`` entries (default 3, never more than 10) per request, so
  one misreading stays bounded; how many more matched is reported;
- a statement that negates nothing stored deletes nothing (and is mined as usual); a correction that
  also states the new value ("we're not a bakery, we're a coffee roaster") deletes nothing either and
  is mined, so the writer supersedes the old memory and keeps its history;
- a request that names an attribute ("my phone number", "my city") takes only memories that state it —
  by the rules' words or the model's reading of the row, a value type ("phone": a number) always a bound —
  and "old" never takes the current value (``judge.select_explicit``); a request no phrase list read
  takes only the rows of a single-valued attribute it names;
- a request or correction reaches a row twice as far as the floor only when they share a word (or its stem)
  or a topic and the model does not read the row as about another attribute (never by the model's reading
  alone: "I don't eat meat at all" is not a denial of "I am vegetarian"); three times as far when the row,
  in another language, carries one of its words in translation (``memory.text.cross_language``).
Deletion is permanent and audited (``deletion``), with each statement's history and the topic tags only
it carried; the caller gets what was deleted and a sentence in the customer's language that names the
statements (never a topic tag alone).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
from django.db.models import Q
from pgvector.django import CosineDistance

from memory.forgetting import targets
from memory.forgetting.deletion import Deleted, DeletionContext, delete_memories
from memory.forgetting.judge import ForgetIntent, Offered, judge, model_judges, read_intent
from memory.models import Memory
from memory.telemetry import traced
from memory.text import lexicon
from memory.text.analysis import carries_words, detect_language, normalise, search_tokens
from memory.text.cross_language import translated_tokens
from memory.text.digests import keyword_digests, topic_digest
from memory.text.vectors import vectors_by_text
from memory.understanding.readings import Reading, read
from tenants.space_settings import SETTINGS, effective_settings

HARD_MAX_DELETIONS = int(SETTINGS["max_deletions_per_request"].maximum)
# Besides the floor, a candidate must be nearly as close as the best one: one request is about one
# thing, and a second, looser match is more likely a different memory.
MARGIN_FROM_BEST = 0.05
# How much farther than the floor an explicit request reaches for a row sharing a word or topic with it.
CORROBORATED_FLOOR_FACTOR = 2.0
# ... and for a row in another language carrying the request's word in translation: the bundled model puts a
# sentence and its translation as far apart as two unrelated sentences of one language (~0.13-0.2).
TRANSLATED_FLOOR_FACTOR = 3.0


# Past the floor a shared word reaches a row only when the model gives the row at least this probability of
# being about the attribute the request is about (a veto, never a reason to delete).
UNLIKELY_ATTRIBUTE = 0.2

# How many of the nearest rows (no floor) an attribute request ("forget my phone number") reads to find
# those that state the attribute: the attribute, not the distance, is the evidence, and this bounds the work.
ATTRIBUTE_SCAN_ROWS = 30


@dataclasses.dataclass
class Candidate:
    memory: Memory
    distance: float
    named: bool = False  # carries every word the request names, or has it as its topic
    shares_words: bool = False  # carries a word of the request or its stem (a request no list read)
    reading: Reading | None = None  # the model's reading of the content (attribute, polarity)

    def offered(self) -> Offered:
        return Offered(
            id=str(self.memory.pk),
            content=self.memory.content,
            distance=self.distance,
            current=self.memory.superseded_by_id is None,
            order=self.memory.created_at.timestamp(),
            named=self.named,
            shares_words=self.shares_words,
            attribute=self.reading.attribute if self.reading else None,
            attribute_confidence=self.reading.attribute_confidence if self.reading else 0.0,
            negative=self.reading.negative if self.reading else None,
        )


class RowReader:
    """The model's readings of stored rows for one request, each row read once, in as few batches as the
    steps that need them."""

    def __init__(self, space):
        self.scope = str(space.id)
        self.readings: dict = {}

    def of(self, memories) -> dict:
        missing = [m for m in dict.fromkeys(memories) if m.pk not in self.readings]
        if missing:
            self.readings.update(
                zip([m.pk for m in missing], read([m.content for m in missing], cache_scope=self.scope), strict=True)
            )
        return {m.pk: self.readings[m.pk] for m in memories}

    def annotate(self, candidates: list[Candidate]) -> list[Candidate]:
        readings = self.of([c.memory for c in candidates])
        for candidate in candidates:
            candidate.reading = readings[candidate.memory.pk]
        return candidates


@dataclasses.dataclass
class ForgetOutcome:
    intent: ForgetIntent
    is_forget_request: bool
    forgotten: list[Deleted]
    more_matched: int
    confirmation: str
    candidates: list[Candidate]
    limits: dict
    dry_run: bool
    engine: str
    needs_operator: bool = False  # "forget everything": only an operator's erasure can do it; the agent routes it

    @property
    def handled(self) -> bool:
        """The message was about forgetting: it must not be mined for new memories."""
        return self.intent.kind == "explicit" or bool(self.forgotten) or (self.dry_run and self.is_forget_request)


def needs_candidates(intent: ForgetIntent, *, dry_run: bool = False) -> bool:
    """Whether anything could be deleted (or shown) for this reading: a message the rule set reads as
    neither a request nor a correction deletes nothing unless a model judges it, so its candidates
    (a vector search and their decryption) would be read for nothing. A dry run shows them anyway."""
    return dry_run or intent.kind is not None or model_judges()


def target_vectors(space_id, intent: ForgetIntent, known: Mapping[str, np.ndarray] | None = None) -> list[np.ndarray]:
    """The vectors of the request's targets: ``known`` (texts the caller already embedded for this space,
    e.g. the turn's message) reused, the rest embedded in one call."""
    by_text = vectors_by_text(space_id, intent.targets, known)
    return [by_text[t] for t in intent.targets]


def candidates_within_floor(
    *, space, intent: ForgetIntent, floor: float, vectors: Mapping[str, np.ndarray] | None = None
) -> list[Candidate]:
    """This space's memories a request may delete: within the floor, or within twice the floor when
    they share a content word or the topic with the request (all within the margin of the best); or — for an
    explicit "forget what you know about X" — carrying every word of X, or X's topic. Topic rows are
    never candidates: they go with the statements they tag (``deletion``). Each candidate carries the
    model's reading of its content. ``vectors``: texts already embedded for this space (``target_vectors``)."""
    vectors = target_vectors(space.id, intent, vectors)
    reader = RowReader(space)
    if intent.model_only:
        # A request in words no list knows: only the rows of the attribute it names, or rows carrying its words
        # (``judge.rule_bound`` keeps those the model reads as the attribute it reads in the request).
        found = {
            c.memory.pk: c
            for c in (
                *_worded_candidates(space=space, intent=intent, vector=vectors[0], floor=floor),
                *attribute_candidates(space=space, intent=intent, vector=vectors[0], reader=reader),
            )
        }
        return reader.annotate(sorted(found.values(), key=lambda c: c.distance))
    active = Memory.objects.filter(space=space, superseded_by__isnull=True).exclude(kind="topic").defer("embedding")
    found: dict = {}

    def keep(memory):
        if memory.pk not in found or memory.distance < found[memory.pk].distance:
            found[memory.pk] = Candidate(memory, float(memory.distance))

    for vector in vectors:
        for memory in _nearest_within(active, vector, floor, HARD_MAX_DELETIONS * 2):
            keep(memory)
    if intent.kind is not None:
        # A request may reach a little farther when the stored row shares a content word or its topic
        # with what the customer said ("forget my contact preference" → topic contact).
        for target, vector in zip(intent.targets, vectors, strict=True):
            tokens = search_tokens(target)
            if not tokens:
                continue
            keys = {topic_digest(space.id, t) for t in tokens} - {""}
            sharing = active.filter(
                Q(keyword_digests__overlap=keyword_digests(space.id, tokens)) | Q(topic_digest__in=keys)
            )
            for memory in _nearest_within(sharing, vector, floor * CORROBORATED_FLOOR_FACTOR, HARD_MAX_DELETIONS):
                keep(memory)
            translated = translated_tokens(target) - set(tokens)
            if translated:
                # "Forget what you know about our accounting software" and "Бухгалтерию мы ведём в 1С.".
                in_translation = active.filter(keyword_digests__overlap=keyword_digests(space.id, translated))
                reach = floor * TRANSLATED_FLOOR_FACTOR
                for memory in _nearest_within(in_translation, vector, reach, HARD_MAX_DELETIONS):
                    if detect_language(memory.content) != intent.language:
                        keep(memory)
            # The same stem in another form ("бухгалтерскую" for "Бухгалтерию"): read in the nearest rows.
            for memory in _nearest_within(active, vector, floor * CORROBORATED_FLOOR_FACTOR, HARD_MAX_DELETIONS):
                if targets.shares_stem(memory.content, tokens, intent.language):
                    keep(memory)
    if intent.learned_attribute:
        # A shared word reaches past the floor, not across subjects: "which accounting program we use" is not
        # "my brother is an accountant", as the model reads the two.
        reader.annotate(list(found.values()))
        found = {pk: c for pk, c in found.items() if c.distance <= floor or not _about_else(c, intent)}
    if found:
        cutoff = min(f.distance for f in found.values()) + MARGIN_FROM_BEST
        found = {pk: f for pk, f in found.items() if f.distance <= cutoff}
    if intent.kind == "explicit":
        for target in intent.targets:
            tokens = search_tokens(target)
            if not tokens or len(tokens) > 6:
                continue
            keys = {topic_digest(space.id, t) for t in {*tokens, normalise(target)}} - {""}
            named = active.filter(
                Q(keyword_digests__contains=keyword_digests(space.id, tokens)) | Q(topic_digest__in=keys)
            ).annotate(distance=CosineDistance("embedding", vectors[0]))
            for memory in named[: HARD_MAX_DELETIONS * 2]:
                found.setdefault(memory.pk, Candidate(memory, float(memory.distance)))
                found[memory.pk].named = True
        for candidate in attribute_candidates(space=space, intent=intent, vector=vectors[0], reader=reader):
            found.setdefault(candidate.memory.pk, candidate)
    return reader.annotate(sorted(found.values(), key=lambda c: c.distance))


def _nearest_within(rows, vector, reach: float, limit: int):
    """``rows`` no farther than ``reach`` from ``vector``, nearest first, at most ``limit`` (each annotated with
    its ``distance``)."""
    return (
        rows.annotate(distance=CosineDistance("embedding", vector)).filter(distance__lte=reach).order_by("distance")
    )[:limit]


def _worded_candidates(*, space, intent: ForgetIntent, vector, floor: float) -> list[Candidate]:
    """For a request no list read: the nearest current rows, as far as a shared word reaches, that carry a word
    of the request or its stem ("Cancella la nota su dove mandare le fatture" / "Mandate le fatture a …")."""
    if not intent.learned_attribute:
        return []
    words = search_tokens(intent.targets[0], intent.language)
    current = Memory.objects.filter(space=space, superseded_by__isnull=True).exclude(kind="topic").defer("embedding")
    rows = _nearest_within(current, vector, floor * CORROBORATED_FLOOR_FACTOR, HARD_MAX_DELETIONS * 2)
    return [
        Candidate(m, float(m.distance), shares_words=True)
        for m in rows
        if carries_words(m.content, words, intent.language)
    ]


def _about_else(candidate: Candidate, intent: ForgetIntent) -> bool:
    """The model finds the row unlikely to be about what the request or correction is about."""
    scores = candidate.reading.attribute_scores if candidate.reading else {}
    return scores.get(intent.learned_attribute, 1.0) < UNLIKELY_ATTRIBUTE


def attribute_candidates(*, space, intent: ForgetIntent, vector, reader: RowReader | None = None) -> list[Candidate]:
    """For "forget my phone number / my city / my OLD address": among the nearest rows, those that state
    the attribute — by the rules' words or the model's reading of the row (read in one batch), a value type
    always a bound — or, for "old" without one, name the value; superseded versions included for "old"."""
    named_by_model = intent.model_only and intent.learned_attribute in targets.NAMED_WITHOUT_WORDS
    names_attribute = intent.attribute or named_by_model
    if intent.kind != "explicit" or not (names_attribute or (intent.wants_old and intent.value_words)):
        return []  # a correction reaches only as far as the floor: it names no attribute to go by
    rows = Memory.objects.filter(space=space).exclude(kind="topic").defer("embedding")
    if not intent.wants_old:
        rows = rows.filter(superseded_by__isnull=True)
    nearest = list(
        rows.annotate(distance=CosineDistance("embedding", vector)).order_by("distance")[:ATTRIBUTE_SCAN_ROWS]
    )
    if names_attribute:
        readings = (reader or RowReader(space)).of(nearest)
        return [
            Candidate(m, float(m.distance), reading=readings[m.pk])
            for m in nearest
            if targets.row_states(
                m.content,
                attribute=intent.attribute,
                learned=intent.learned_attribute,
                row_attribute=readings[m.pk].attribute,
                row_confidence=readings[m.pk].attribute_confidence,
            )
        ]
    return [
        Candidate(m, float(m.distance))
        for m in nearest
        if targets.shares_value(m.content, intent.value_words, intent.language)
    ]


def reply_language(language: str) -> str:
    """The language the confirmation is worded in: English where the lexicon has no wording."""
    return language if language in lexicon.CONFIRMATIONS else "en"


def _done(language: str, items: list[str], more: int) -> str:
    done, _nothing, more_note = lexicon.CONFIRMATIONS[reply_language(language)]
    return done.format(items="; ".join(items)) + (more_note.format(more=more) if more else "")


def confirmation_for(language: str, forgotten: list[Deleted], more: int, *, explicit: bool) -> str:
    """What was deleted, the statements' own words (never a topic tag: it only goes with its statements)."""
    said = [d for d in forgotten if d.kind != "topic"]
    if not said:
        return lexicon.CONFIRMATIONS[reply_language(language)][1] if explicit else ""
    return _done(language, [f"“{d.content}”" for d in said], more)


def reply_record(outcome: ForgetOutcome) -> dict | None:
    """What the customer was told, as a record without content: the language, which sentence
    ("done", "nothing", "needs_operator"), the forgotten memory ids and how many more matched.
    None when the customer was told nothing. Deletion is permanent, so the quoted text is not kept."""
    if not outcome.confirmation:
        return None
    if outcome.needs_operator:
        template = "needs_operator"
    else:
        template = "done" if outcome.forgotten else "nothing"
    return {
        "language": reply_language(outcome.intent.language),
        "template": template,
        "memory_ids": [str(d.id) for d in outcome.forgotten if d.kind != "topic"],
        "more_matched": outcome.more_matched,
    }


def confirmation_on_record(record: dict) -> str:
    """The sentence the customer got, rendered again from ``reply_record`` with «memory <id>» in place
    of each deleted memory's text."""
    language = reply_language(record.get("language", "en"))
    template = record.get("template")
    if template == "needs_operator":
        return lexicon.BROAD_CONFIRMATIONS.get(language, lexicon.BROAD_CONFIRMATIONS["en"])
    if template == "nothing":
        return lexicon.CONFIRMATIONS[language][1]
    items = [f"«memory {memory_id}»" for memory_id in record.get("memory_ids", [])]
    return _done(language, items, int(record.get("more_matched") or 0))


@traced("engram.forget", records=lambda outcome: len(outcome.forgotten))
def forget(
    *,
    space,
    utterance: str,
    context: DeletionContext,
    dry_run: bool = False,
    intent: ForgetIntent | None = None,
    vectors: Mapping[str, np.ndarray] | None = None,
) -> ForgetOutcome:
    """``intent``: ``read_intent(utterance)`` when the caller has read it already; ``vectors``: texts the
    caller has embedded for this space already (the turn embeds its message once for everything)."""
    settings = effective_settings(space)
    floor = settings["forget_floor"]
    limit = min(settings["max_deletions_per_request"], HARD_MAX_DELETIONS)
    limits = {"forget_floor": floor, "max_deletions_per_request": limit}
    intent = intent or read_intent(utterance)
    candidates = (
        candidates_within_floor(space=space, intent=intent, floor=floor, vectors=vectors)
        if needs_candidates(intent, dry_run=dry_run)
        else []
    )
    judgement = judge(utterance, intent, [c.offered() for c in candidates])
    if intent.kind == "correction" and intent.states_new_value:
        # "We're not a bakery, we're a coffee roaster": an update, whoever judged it. Nothing is deleted and
        # the turn is mined, so the writer supersedes the old memory with the new value and keeps history.
        judgement = dataclasses.replace(judgement, is_forget_request=False, delete_ids=[])
    chosen_ids = set(judgement.delete_ids) if judgement.is_forget_request else set()
    # Only ids that code offered, nearest first, never more than the limit.
    chosen = [c for c in candidates if str(c.memory.pk) in chosen_ids]
    to_delete, overflow = chosen[:limit], chosen[limit:]
    if dry_run:
        forgotten = [Deleted(c.memory.pk, c.memory.kind, c.memory.content) for c in to_delete]
    elif to_delete:
        forgotten = delete_memories(
            space=space,
            memories=[c.memory for c in to_delete],
            context=dataclasses.replace(context, limits=limits),
            distances={c.memory.pk: c.distance for c in to_delete},
            with_topic_tags=True,
        )
    else:
        forgotten = []
    explicit = intent.kind == "explicit" or (judgement.engine == "openai" and judgement.is_forget_request)
    confirmation = ""
    if judgement.is_forget_request or intent.kind == "explicit":
        # Always our own sentence, built from what was actually deleted: a model's wording could
        # name something the limits kept.
        confirmation = confirmation_for(intent.language, forgotten, len(overflow), explicit=explicit)
    needs_operator = intent.kind == "explicit" and intent.broad
    if needs_operator:
        # Not "nothing stored": there is, and the caps keep a message from erasing it all. Say so, truthfully.
        confirmation = lexicon.BROAD_CONFIRMATIONS.get(intent.language, lexicon.BROAD_CONFIRMATIONS["en"])
    return ForgetOutcome(
        intent=intent,
        is_forget_request=judgement.is_forget_request or intent.kind == "explicit",
        forgotten=forgotten,
        more_matched=len(overflow),
        confirmation=confirmation,
        candidates=candidates,
        limits=limits,
        dry_run=dry_run,
        engine=judgement.engine,
        needs_operator=needs_operator,
    )
