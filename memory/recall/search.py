"""Recall: what this space knows that is close enough to the query to matter — and nothing else.

Strategies, each over this space's active (not superseded) memories only:
- vector: exact cosine distance to the query (and any extra phrases); a candidate must be within
  the space's recall distance *before* fusion; topic rows (a bare name) are matched by key only;
- keyword: the blind index (keyed digests of lemmas / CJK bigrams); a token carried by more than
  half of a space's memories is too common to count as a match;
- topic: exact match of a stored topic key found in the query;
- messages: kept transcript lines by keyword, when the space keeps transcripts.
Passing candidates are fused by reciprocal rank fusion (weights per space); importance and
recency break ties; a task from another (ended) session counts half. An account with nothing
close enough gets ``[]``: there is always a nearest neighbour, and returning it is the bug.

Every candidate considered is kept with its distance, ranks and whether it passed, so the console
playground can show exactly why.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from memory.models import Memory, Message
from memory.recall import relevance
from memory.recall.candidates import NEAREST_SHOWN, VECTOR_CANDIDATES, MeaningBounds, candidate_rows
from memory.recall.customer_named import about_the_customer, customer_named_in, without_names
from memory.recall.prompt_block import build_prompt, line_for
from memory.recall.query_analysis import QueryAnalysis, analyse_query
from memory.recall.someone_else import SomeoneElse, someone_else_asked_about
from memory.recall.timings import Timings
from memory.telemetry import traced
from memory.text.analysis import detect_language, language_if_sure, languages_remembered_in_space, search_tokens
from memory.text.cross_language import LANGUAGES as TRANSLATED_LANGUAGES
from memory.text.cross_language import translated_tokens
from memory.text.digests import keyword_digests, topic_digest
from memory.text.embeddings import EmbeddingUnavailable, local_embedder, sent_vector
from memory.text.vectors import embed_for_space, engine_name, out_of_space
from memory.understanding.readings import SUBJECT_ATTRIBUTES, Reading, read_one
from tenants.encrypted_fields import read_without_keeping
from tenants.space_settings import SETTINGS, effective_settings

RRF_K = 60
# How sure the learned reading must be of the attribute a query asks about before rows of it are searched.
ATTRIBUTE_QUERY_CONFIDENCE = 0.7
# A question with words of its own ("Where does the customer live?") is routed only when the reading is this
# sure, and only its attribute's nearest current statements pass by it: the answer to "where do I live" is the
# residence row, whatever words it shares with the question, but a whole attribute's rows are not an answer.
# Measured out of fold on the training questions (each language read by heads that never saw it): routed
# questions' attribute is right 98.8 % of the time at 0.7 and 99.1 % at 0.8, while 0.8 routes 52 % of the
# single-valued questions and 0.7 63 %. At 0.8 a question read at 0.799 or 0.804 (the same words, embedded in
# another batch) was routed or not by chance.
WORDED_QUESTION_CONFIDENCE = 0.7
ROUTED_STATEMENTS = 2
# Only attributes with one current value: any row of them answers "where does she live?", while a row of a
# collection (pets, family, hobbies, orders) does not answer a question about another member ("Do I have a
# cat?" is not answered by "I have a dog called Biscuit.").
SINGLE_VALUED = frozenset({"name", "residence", "contact", "job", "company", "plan", "payment", "schedule"})
# ...and only when the reading says it is about the customer rather than someone else, the company or nothing
# ("Where does the mayor live?", "Where is the Eiffel Tower?").
ABOUT_THE_CUSTOMER = 0.5
ENDED_TASK_FACTOR = 0.5


@dataclasses.dataclass
class Scored:
    item: Memory | Message
    kind: str
    distance: float | None = None
    ranks: dict[str, int] = dataclasses.field(default_factory=dict)
    matched_tokens: int = 0
    fused: float = 0.0
    passes: bool = False
    relevance: float | None = None  # the learned gate's probability that the row answers (memory.recall.relevance)
    gate_features: np.ndarray | None = None
    reason: str = ""  # why it passed or failed, in words an operator tunes by (the playground shows it)

    @property
    def id(self):
        return self.item.pk

    def as_hit(self) -> dict:
        item = self.item
        is_memory = isinstance(item, Memory)
        return {
            "id": item.pk,
            "kind": self.kind,
            "content": item.content,
            "topic": item.topic if is_memory else None,
            "importance": item.importance if is_memory else None,
            "event_at": item.event_at if is_memory else None,
            # When the customer said it: what "yesterday" or "next month" in the content count from.
            "said_at": getattr(item, "said_at", None) if is_memory else item.sent_at,
            "updated_at": item.updated_at if is_memory else item.sent_at,
            "score": {
                "distance": None if self.distance is None else round(self.distance, 4),
                "ranks": {s: self.ranks.get(s) for s in ("vector", "keyword", "topic", "messages")},
                "fused": round(self.fused, 6),
                "relevance": None if self.relevance is None else round(self.relevance, 2),
            },
        }


@dataclasses.dataclass
class RecallResult:
    hits: list[dict]
    prompt: str
    candidates: list[Scored]
    analysis: QueryAnalysis
    settings: dict
    warning: str = ""
    # Milliseconds per phase: "embed" (the query's vectors), "db" (the candidate statements).
    timings: dict[str, float] = dataclasses.field(default_factory=dict)
    left_out: int = 0  # rows that passed but did not fit in ``max_chars``
    # The query as searched when it called the customer by name (memory/recall/customer_named.py), else "".
    searched_as: str = ""


def _query_vectors(space, query: str, analysis: QueryAnalysis, query_vector=None) -> np.ndarray:
    # Embedded as passages, not with e5's "query:" prefix: memories and turn messages are both short
    # conversational utterances, and on multilingual-e5-small the symmetric form put cross-language
    # question/fact pairs ~0.03-0.05 closer (e.g. "Сколько у вас фургонов?" vs "We run a fleet of
    # four vans.": 0.188 vs 0.234) while unrelated pairs moved about as much.
    if query_vector is None:
        return embed_for_space(space.id, [query, *analysis.phrases])
    phrases = embed_for_space(space.id, analysis.phrases) if analysis.phrases else []
    return np.vstack([np.asarray(query_vector, dtype=np.float32).reshape(1, -1), *phrases])


def _passing_by_meaning(nearest: dict) -> list:
    """Vector matches that pass (judged in SQL, see ``candidates.MeaningBounds``), in their vector rank."""
    return sorted((m for m in nearest.values() if m.vector_rank is not None), key=lambda m: m.vector_rank)


def _useful_digests(space_id, tokens: set[str]) -> list[str]:
    """The query tokens as blind-index digests; which of them are too common is decided in SQL."""
    tokens = {t for t in tokens if t}
    return keyword_digests(space_id, tokens) if tokens else []


def _read_query(space, query: str) -> Reading | None:
    try:
        return read_one(query, cache_scope=str(space.id))
    except EmbeddingUnavailable:
        return None


def _as_asked_of_the_customer(space, query: str) -> tuple[str, Reading | None]:
    """A question that calls the customer by the space's display name, as searched: without the name, read as
    about the customer (memory/recall/customer_named.py). As asked — ``(query, None)``, or with its reading —
    when the name is also a word the customer used for something else ("When did I go to Florence?" from
    Florence Smith, who went there), when nothing would be left to search for ("Who is Gina?"), or when it
    asks about someone the customer knows ("Kde bydlí Janin bratr?": the reading is sure the question is
    about someone else, by a word that is not the customer's name)."""
    named = customer_named_in(query, space.display_name)
    if not named or _said_otherwise(space, named):
        return query, None
    searched = without_names(query, named)
    as_asked = _read_query(space, query)
    if not search_tokens(searched, detect_language(searched)):
        return query, as_asked
    someone = someone_else_asked_about(query, as_asked)
    if someone is not None and not set(someone.words) <= set(named):
        return query, as_asked
    return searched, about_the_customer(_read_query(space, searched))


def _said_otherwise(space, named: list[str]) -> bool:
    """Whether a current row other than the customer's name carries one of the words (by the blind keyword
    index: the place "Florence", the season "Sommer")."""
    tokens = set().union(*(search_tokens(word) for word in named))
    digests = keyword_digests(space.id, tokens) if tokens else []
    if not digests:
        return False
    return (
        Memory.objects.filter(space=space, superseded_by__isnull=True, keyword_digests__overlap=digests)
        .exclude(topic_digest=topic_digest(space.id, "name"))
        .exclude(kind="topic")
        .exists()
    )


def _asks_about_someone(reading: Reading | None) -> bool:
    """Whether a question of stop words alone still asks something of someone, so that it is searched by meaning
    (under the gate, as any question): the English stop list holds "work", "working", "opening", "old",
    "order", "number" and "name", so "What is he working on opening?" and "How old is she?" keep no keyword.
    The learned reading tells them from "is it in?" or "what is it?": it reads a question about the customer,
    someone else or the company, where those are about nothing."""
    if reading is None or reading.intent != "question":
        return False
    return max(reading.subject_scores, key=reading.subject_scores.get, default="nothing") != "nothing"


def _route_to_attribute(query: str, reading: Reading | None, analysis: QueryAnalysis, *, worded: bool) -> str:
    """A query that asks about one of the customer's attributes ("What is his order number?", "Where does the
    customer live?", "name") is searched by that attribute too: the learned reading names it, and it is the
    topic the rows stating it carry (``memory.extraction.offline``), so it joins the query's topic keys.
    Embedded as recall embeds the query (the same cached vector), so it costs no embedding of its own. A query
    that is an attribute's own name ("name", "plan": the topics' vocabulary, as a caller reads them in recall's
    answers) is that attribute without a reading: one word alone reads as small talk. ``worded``: the query
    has words of its own, so only a question read surely enough is routed (see ``WORDED_QUESTION_CONFIDENCE``)."""
    named = query.strip().lower()
    if named in SUBJECT_ATTRIBUTES:
        analysis.topic_keys.add(named)
        return named
    if reading is None:
        return ""
    if reading.attribute not in SUBJECT_ATTRIBUTES or reading.attribute_confidence < ATTRIBUTE_QUERY_CONFIDENCE:
        return ""
    if reading.intent == "small_talk":
        return ""
    if worded and (
        reading.attribute not in SINGLE_VALUED
        or reading.intent != "question"
        or reading.attribute_confidence < WORDED_QUESTION_CONFIDENCE
        or reading.subject_scores.get("customer", 0.0) < ABOUT_THE_CUSTOMER
    ):
        return ""  # not surely a question about this attribute of the customer ("Where does the mayor live?")
    analysis.topic_keys.add(reading.attribute)
    return reading.attribute


def _routed_statements(rows: list, routed: str, *, limit: int | None) -> dict:
    """The statements that pass by the routed attribute alone, each with its rank: the nearest ``limit`` of
    them (all, by importance, for a query of stop words, whose distances say little). A topic row named only
    by the routed attribute is a tag, not an answer: its statements are."""
    if not routed:
        return {}
    stated = [m for m in rows if m.topic_rank is not None and m.topic == routed and m.kind != "topic"]
    if limit is None:
        return {m.pk: m.topic_rank for m in stated}
    stated.sort(key=lambda m: (m.distance if m.distance is not None else 2.0, m.topic_rank))
    return {m.pk: rank for rank, m in enumerate(stated[:limit], start=1)}


def _bounds_reason(item: Scored) -> str:
    if not item.ranks:
        return "outside the recall distances, no keyword or topic match"
    return "matched: " + ", ".join(sorted(item.ranks))


def _beyond_veto(item: Scored, settings: dict, routed: bool, query_language: str | None) -> bool:
    """Rows the bounds pass that the gate may not veto: one within the inner distance, which the bounds trust
    on meaning alone; a row routed by the one-valued attribute the question surely asks of the customer
    ("Where does the customer live?", or a query of stop words such as "name"), which is that attribute's
    answer whatever words it shares with the question; and a row in another language than the question (the
    gate was trained on questions in the row's language: across languages its features say little)."""
    if not item.passes:
        return False
    if item.distance is not None and item.distance <= settings["recall_distance"]:
        item.reason += "; within the inner distance (the gate does not veto)"
        return True
    if routed:
        item.reason = f"routed by the attribute the question asks about; relevance {item.relevance:.2f} (no veto)"
        return True
    if item.relevance < settings["relevance_floor"] and query_language in TRANSLATED_LANGUAGES:
        row_language = language_if_sure(read_without_keeping(item.item, "content"))
        # Only the languages recall translates between (memory.text.cross_language), where a question and
        # a row in two of them are the pairs cross-language recall is built for — and only when both are
        # surely in them: an Italian or Turkish question and row, read by dictionaries that do not hold
        # their language, came out as two different ones and escaped the gate ("Che tempo fa oggi?" got
        # "Ho una sorella gemella che si chiama Chiara.").
        if row_language in TRANSLATED_LANGUAGES and row_language != query_language:
            item.reason += f"; relevance {item.relevance:.2f}, but in another language than the question (no veto)"
            return True
    return False


def _only_rows_naming(someone: SomeoneElse | None, scored: dict, space) -> None:
    """A question surely about someone else keeps only the rows that name them (``memory.recall.someone_else``)."""
    if someone is None or someone.is_the_customer(space):
        return
    for item in scored.values():
        if item.passes and not someone.named_in(read_without_keeping(item.item, "content")):
            item.passes = False
            item.reason += f"; the question is about someone else (“{someone.word}”), whom this row does not name"


def _gate(item: Scored, settings: dict, *, behind: int) -> None:
    """The learned gate's verdict: within the distance bounds it may veto, outside them it may admit (see
    ``memory.recall.relevance``)."""
    floor_name = "relevance_floor" if item.passes else "relevance_admit"
    floor = settings[floor_name]
    verdict = item.relevance >= floor
    if item.passes:
        item.reason += f"; relevance {item.relevance:.2f} {'≥' if verdict else '<'} floor {floor}"
    else:
        item.reason = f"outside the distances; relevance {item.relevance:.2f} {'≥' if verdict else '<'} admit {floor}"
    if verdict and not item.passes:
        item.ranks["vector"] = behind  # admitted by the gate: fused after what the bounds passed
    item.passes = verdict


def _pairs_of(scored: dict, nearest: dict, analysis: QueryAnalysis, named_topics: set[str]) -> dict:
    """What recall knows of each candidate memory for the gate (topic rows and transcript lines aside)."""
    closest = min((m.distance for m in nearest.values() if m.distance is not None), default=None)
    pairs = {}
    for pk, item in scored.items():
        memory = item.item
        if not isinstance(memory, Memory) or memory.kind == "topic":
            continue
        topic = (memory.topic or "").strip().lower()
        pairs[pk] = relevance.Pair(
            distance=memory.distance,
            nearest_distance=closest,
            nearest_position=memory.nearest_position,
            matched_tokens=item.matched_tokens,
            query_keywords=len(analysis.keywords),
            topic_named=topic in named_topics,
            row_topic=topic,
            row_kind=memory.kind,
        )
    return pairs


def _judge_relevance(
    space, scored: dict, nearest: dict, analysis, named_topics, reading, query_vectors, *, decide
) -> None:
    """Each candidate memory's gate features (kept for training) and, when the gate ``decide``s, its
    probability of answering. Nothing when the query has no vector or the space's vectors are not the bundled
    model's (the gate was trained on those): the distance bounds then decide alone."""
    if query_vectors is None or not gate_reads_this_engine():
        return
    pairs = _pairs_of(scored, nearest, analysis, named_topics)
    if not pairs:
        return
    # Fetched with the candidates, in binary (``candidates._Statement.select``): no statement of its own.
    stored = {pk: scored[pk].item.__dict__.get("embedding_sent") for pk in pairs}
    ids = [pk for pk in pairs if stored.get(pk) is not None]
    if not ids:
        return
    # One inversion for the question and the rows: each call costs its four rounds of the mixer.
    question_vector, *row_vectors = out_of_space(
        space.id, np.vstack([query_vectors[:1], *(sent_vector(stored[pk]) for pk in ids)])
    )
    question = relevance.QuestionReading.of(reading)
    rows = [
        relevance.features(pairs[pk], question, question_vector * vector)
        for pk, vector in zip(ids, row_vectors, strict=True)
    ]
    for pk, row in zip(ids, rows, strict=True):
        scored[pk].gate_features = row
    if decide:
        for pk, probability in zip(ids, relevance.gate().probabilities(rows), strict=True):
            scored[pk].relevance = float(probability)


def gate_reads_this_engine() -> bool:
    return engine_name() == local_embedder().name


def _first_found(memory) -> tuple:
    """The order the strategies met a row in before: vector candidates, then keyword, then topic."""
    if memory.nearest_position is not None:
        return (0, memory.nearest_position)
    if memory.keyword_rank is not None:
        return (1, memory.keyword_rank)
    return (2, memory.topic_rank)


@traced(
    "search_memory engram",
    operation="search_memory",
    records=lambda r: len(r.hits),
    query_argument="query",
    contents=lambda r: [h["content"] for h in r.hits],
)
@languages_remembered_in_space  # the query's language is read by its analysis and its translation
def recall(
    *,
    space,
    query: str,
    limit: int | None = None,
    kinds: list[str] | None = None,
    current_session=None,
    overrides: dict | None = None,
    max_chars: int | None = None,
    query_vector=None,
) -> RecallResult:
    """Recall for ``query``. ``candidates`` keeps every row considered, passing or not (the playground
    shows them).

    ``max_chars``: the caller has room for that many characters of prompt lines (``line_for``). When
    something passed (the question is about what this customer said), the rows that fit are returned, at
    most ``limit``, nearest first, the room filled with the next nearest statements that did not pass
    (``_within_budget``); ``left_out`` counts the passing rows that did not fit. An account with nothing
    close enough still gets ``[]``. ``query_vector``: ``query`` already embedded for this space (as a passage)."""
    timings = Timings()
    settings = {**effective_settings(space), **(overrides or {})}
    limit = limit or settings["recall_limit"]
    threshold = settings["recall_distance"]
    weights = settings["strategy_weights"]
    # The learned reading embeds the query first (recall's own embedding below then finds it cached), so its
    # time is the query's embedding in the Server-Timing header, with the reading's ~0.5 ms of arithmetic.
    with timings.measure("embed"):
        searched, reading = _as_asked_of_the_customer(space, query) if query_vector is None else (query, None)
    analysis = analyse_query(searched)
    keys_before = set(analysis.topic_keys)
    worded = bool(analysis.keywords or analysis.phrases)
    with timings.measure("embed"):
        reading = reading or _read_query(space, searched)
    routed = _route_to_attribute(query, reading, analysis, worded=worded)
    routed_only = routed if routed not in keys_before else ""
    if not analysis.keywords and not analysis.phrases and not routed and not _asks_about_someone(reading):
        # Only stop words ("the", "is it in?"): nothing to search for, and any nearest row is noise.
        return RecallResult(
            hits=[], prompt="", candidates=[], analysis=analysis, settings=settings, warning="no content words"
        )
    warning = ""
    try:
        with timings.measure("embed"):
            vectors = _query_vectors(space, searched, analysis, query_vector)
    except EmbeddingUnavailable as exc:
        # Recall must not take the turn down with it: keyword and topic matches still work.
        vectors, warning = None, f"vector search skipped: {exc}"

    digests: list[str] = []
    topic_digests: set[str] = set()
    if settings["hybrid"]:
        # The query's words in the other supported languages count as keywords too: a question in
        # one language about a fact stated in another shares no token with it (memory/text/cross_language.py).
        digests = _useful_digests(space.id, analysis.keywords | translated_tokens(searched))
        topic_digests = {topic_digest(space.id, key) for key in analysis.topic_keys if key}
        topic_digests.discard("")
    with timings.measure("db"):
        rows = candidate_rows(
            space=space,
            vectors=vectors,
            kinds=kinds,
            keyword_digests=digests,
            topic_digests=topic_digests,
            bounds=MeaningBounds(alone=threshold, corroborated=settings["corroborated_recall_distance"]),
            nearest_shown=_nearest_needed(max_chars, settings),
        )
    rows.sort(key=_first_found)
    # A topic row's content is only its name: a word that is near any short query. Topics are
    # matched by their key, never by vector (the nearest candidates are statements only).
    nearest = {m.pk: m for m in rows if m.nearest_position is not None}
    # All the statements the vectors found, also those not read (``_nearest_needed``): each nearest row carries it.
    found_nearby = next((m.nearest_found for m in nearest.values()), 0)
    routed_rows = _routed_statements(rows, routed_only, limit=ROUTED_STATEMENTS if worded else None)
    scored: dict = {}
    for memory in rows:
        item = Scored(item=memory, kind=memory.kind, distance=memory.distance)
        if memory.keyword_rank is not None:
            item.ranks["keyword"] = memory.keyword_rank
            item.matched_tokens = memory.matched_tokens
        if memory.topic_rank is not None and (memory.topic != routed_only or memory.pk in routed_rows):
            item.ranks["topic"] = routed_rows.get(memory.pk, memory.topic_rank)
        scored[memory.pk] = item
    if settings["hybrid"] and settings["keep_transcripts"] and not kinds:
        with timings.measure("db"):
            _transcript_candidates(space, analysis, scored)

    for rank, memory in enumerate(_passing_by_meaning(nearest), start=1):
        scored[memory.pk].ranks["vector"] = rank

    gated = settings["relevance_gate"]
    query_language = language_if_sure(query)
    _judge_relevance(space, scored, nearest, analysis, keys_before, reading, vectors, decide=gated)
    # The rows routed by the attribute asked about, also when the query names it in words ("name"): no veto.
    answering_attribute = routed_rows if worded else _routed_statements(rows, routed, limit=None)
    for item in scored.values():
        item.passes = bool(item.ranks)
        item.reason = _bounds_reason(item)
        routed_here = item.id in answering_attribute
        if gated and item.relevance is not None and not _beyond_veto(item, settings, routed_here, query_language):
            _gate(item, settings, behind=found_nearby + 1)
        item.fused = sum(weights.get(s, 0.0) / (RRF_K + rank) for s, rank in item.ranks.items())
        if (
            item.kind == "task"
            and current_session is not None
            and getattr(item.item, "task_session_id", None) != current_session.pk
        ):
            item.fused *= ENDED_TASK_FACTOR
        if item.fused <= 0:
            item.passes = False
    if gated:
        _only_rows_naming(someone_else_asked_about(query, reading), scored, space)

    def order(item: Scored):
        importance = getattr(item.item, "importance", 0.0) or 0.0
        updated = getattr(item.item, "updated_at", None) or getattr(item.item, "sent_at", None)
        # With the gate deciding, the row likeliest to answer comes first; transcript lines after memories.
        likelihood = (item.relevance if item.relevance is not None else -1.0) if gated else 0.0
        return (-likelihood, -item.fused, -importance, -(updated.timestamp() if updated else 0))

    candidates = sorted(scored.values(), key=order)
    hits = [c.as_hit() for c in candidates if c.passes]
    left_out = 0
    if max_chars and hits:
        fitted = _within_budget(hits, nearest, scored, max_chars)
        shown = {hit["id"] for hit in fitted[:limit]}
        left_out = sum(hit["id"] not in shown for hit in hits)
        hits = fitted[:limit]
    else:
        hits = hits[:limit]
    return RecallResult(
        hits=hits,
        prompt=build_prompt(hits, settings["prompt_token_budget"]),
        candidates=candidates,
        analysis=analysis,
        settings=settings,
        warning=warning,
        timings=timings.milliseconds,
        left_out=left_out,
        searched_as=searched if searched != query else "",
    )


def _nearest_needed(max_chars: int | None, settings: dict) -> int:
    """How many of the nearest statements recall reads. Those the gate may admit: at the default admit
    probability none past the tenth did on the mem0 workload but by keyword or topic (read whatever their
    place), so NEAREST_SHOWN; all of them where an operator lowered ``relevance_admit``. And with ``max_chars``
    all of them: the room is filled nearest first with lines of any length (``_within_budget``)."""
    if max_chars or settings["relevance_admit"] < SETTINGS["relevance_admit"].default:
        return VECTOR_CANDIDATES
    return NEAREST_SHOWN


def _within_budget(hits: list[dict], nearest: dict, scored: dict, max_chars: int) -> list[dict]:
    """What fits in ``max_chars`` characters of prompt lines, best first.

    Once something passed (the question is about what this customer said), every candidate statement, passing
    or not, nearest first: in a long casual history the statement that answers often sits just outside the
    strict bounds (its words differ from the question's, and many small-talk rows crowd the distances), and
    the distance orders the room better than the gate's likelihood does. On LoCoMo's development part (the
    data this order was chosen on; eval/locomo.py), answer words at 500/1,000 characters: the gate's surest
    rows first, each with the other rows of its message, 45.8/53.0 %; nearest first 47.8/54.3 %; the
    generated long histories (eval/long_history.py) unchanged at 93.8/94.1 %. With the gate off, the rows
    that passed keep recall's own order. A line that does not fit is left out and the next ones still tried.
    Filling the room the caller has costs nothing but those characters. Topic rows are names, not lines:
    they cost nothing."""
    topics = [hit for hit in hits if hit["kind"] == "topic"]
    ungated = [hit for hit in hits if hit["kind"] != "topic" and hit["score"]["relevance"] is None]
    shown = {hit["id"] for hit in (*topics, *ungated)}
    pool = {hit["id"]: hit for hit in hits if hit["id"] not in shown}
    for memory in nearest.values():
        if memory.pk not in shown:
            pool.setdefault(memory.pk, scored[memory.pk].as_hit())
    rest = sorted(pool.values(), key=_distance_or_last)
    fitted, used = [], 0
    for hit in [*topics, *ungated, *rest]:
        cost = 0 if hit["kind"] == "topic" else len(line_for(hit)) + 1
        if used + cost > max_chars:
            continue
        fitted.append(hit)
        used += cost
    return fitted


def _distance_or_last(hit: dict) -> float:
    # Transcript lines have no distance of their own: after the statements.
    distance = hit["score"]["distance"]
    return float("inf") if distance is None else distance


def _transcript_candidates(space, analysis: QueryAnalysis, scored: dict) -> None:
    digests = set(keyword_digests(space.id, analysis.keywords)) if analysis.keywords else set()
    if not digests:
        return
    messages = list(
        Message.objects.filter(space=space, role=Message.Role.CUSTOMER, keyword_digests__overlap=list(digests))
        .exclude(content=None)
        .order_by("-sent_at")[:VECTOR_CANDIDATES]
    )
    ordered = sorted(messages, key=lambda m: -len(set(m.keyword_digests) & digests))
    for rank, message in enumerate(ordered, start=1):
        scored[message.pk] = Scored(item=message, kind="message", ranks={"messages": rank})
