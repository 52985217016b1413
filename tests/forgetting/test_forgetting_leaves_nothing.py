"""Forgetting leaves nothing (#28.3): random facts in random phrasings are stored, some are forgotten through
every path — a turn in conversation, ``POST …/forget``, the MCP tool, ``DELETE …/memories/<id>``, the console,
the retention sweep, erasure of the space — and then every place text or a value can live is searched for
each forgotten value: memory rows, their history, topic rows, transcript lines (merged mentions included, and
the agent's replies quoting the values), turn records, the blind keyword index, vectors, the Django cache and
the process's caches, the export, the turn view (API and console), recall with provenance, the memory API,
MCP, the deletion audit, OpenTelemetry spans, logs, and every table of the database as stored. The facts kept
are searched the same way and must be found, so a search that finds nothing proves something.

Memory text is encrypted: rows are compared decrypted, in Python (a LIKE never matches ciphertext); the raw
database scan is for plaintext that should not be there at all. Everything runs through the offline
extraction engine and the bundled embedding model, as a deployment without a chat model does.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import functools
import gc
import itertools
import json
import logging
import pickle
import re
import types
import uuid

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st
from mcp.server.mcpserver.exceptions import ToolError
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pgvector.django import CosineDistance

from mcp_server.tools import build_server_with_tools
from memory import telemetry
from memory.forgetting.retention import expire_space
from memory.models import Memory, Message, Turn
from memory.text import analysis
from memory.text.analysis import search_tokens
from memory.text.digests import keyword_digests
from memory.text.embeddings import CachingEmbedder
from memory.text.vectors import embed_for_space
from tenants import scope
from tenants.api_keys import issue_api_key
from tenants.models import Space
from tenants.tenant_admin import create_operator, create_tenant
from tests.conftest import api_client, make_space

pytestmark = pytest.mark.django_db

# --- the facts: phrasings the offline engine stores, and requests that reach exactly them -----------------


@dataclasses.dataclass(frozen=True)
class Template:
    statements: tuple[str, ...]  # {v}: the value
    requests: tuple[str, ...]  # forget requests in words; {v}: the value
    value: str  # what the value looks like: word, name, digits, phone, email, password


# A PIN of as many digits as a phone number stays when the phone number is forgotten; an account number and a
# phone number said one after the other are tested on their own (test_a_phone_number_does_not_replace_…).
TEMPLATES = {
    "phone": Template(
        ("My phone number is {v}.", "You can reach me on {v}.", "Hi! My phone number is {v}, call me any time."),
        ("Please forget my phone number.", "Forget what you know about my phone number."),
        "phone",
    ),
    "pin": Template(("My PIN is {v}.",), ("Please forget my PIN.",), "digits"),
    "pet": Template(("Our dog is called {v}.", "My cat's name is {v}."), ("Forget what you know about {v}.",), "name"),
    "residence": Template(
        ("I live in {v}.",), ("Please forget my address.", "Forget what you know about {v}."), "name"
    ),
    "email": Template(("My email is {v}.", "Write to me at {v}."), ("Please forget my email address.",), "email"),
    "allergy": Template(("I'm allergic to {v}.",), ("Forget what you know about my allergy.",), "word"),
    "password": Template(("The gate password is {v}.",), ("Forget the gate password.",), "password"),
    "supplier": Template(
        ("Our supplier is {v}.", "We buy our packaging from {v}."), ("Forget what you know about {v}.",), "name"
    ),
    "payroll": Template(("We use {v} for payroll.",), ("Forget that we use {v}.",), "name"),
}
# Said long ago, so the sweep expires them: an event past event_retention_days, a task of an idle session.
RETAINED = {
    "event": Template(("Our van {v} broke down last week.",), (), "name"),
    "task": Template(("Remind me to renew the {v} contract.",), (), "name"),
}
LONG_AGO = datetime.timedelta(days=400)

# Paths that forget one memory of the space; "keep" facts stay. Retention and erasure are in every example too.
IN_WORDS = ("conversation", "api_forget", "mcp_forget")
BY_ID = ("api_delete", "console")
KEEP = "keep"

SYLLABLES = ("zor", "blat", "quib", "trosk", "kel", "vark", "snor", "vil", "gast", "pel", "flin", "moss", "brel",
             "dolv", "quen", "pax", "ulm", "jar", "nosk", "tib", "wex", "drum", "yol", "fen")  # fmt: skip


@dataclasses.dataclass
class Fact:
    template: str
    value: str
    statement: str
    path: str
    request: str = ""
    ingested: bool = False  # came in a transcript, not a turn
    restated: bool = False  # said again in another session: one row, two transcript lines (a merge)
    # Reworded by an operator (the API's PATCH): the customer's wording becomes history. (History by a newer
    # statement is the engine's judgement of meaning, which varies with made-up values: not what is tested here.)
    edited: bool = False
    contents: list[str] = dataclasses.field(default_factory=list)  # its rows as stored, history included


@dataclasses.dataclass
class Scenario:
    facts: list[Fact]  # of the space that stays
    retained: list[Fact]  # expired by the sweep
    erased: list[Fact]  # of the space that is erased

    def everything(self) -> list[Fact]:
        return self.facts + self.retained + self.erased

    def forgotten(self) -> list[Fact]:
        return [f for f in self.everything() if f.path != KEEP]

    def kept(self) -> list[Fact]:
        return [f for f in self.facts if f.path == KEEP]


def make_value(kind: str, word: str, number: int) -> str:
    digits = str(number)
    if kind == "word":
        return word
    if kind == "name":
        return word.capitalize()
    if kind == "digits":
        # Nine digits, a phone number's shape: "forget my phone number" must still leave it
        # (test_forget_my_phone_number_takes_the_phone_number_not_another_long_number).
        return digits
    if kind == "phone":
        return f"+{digits[0]}{digits[8]} {digits[1:4]} {digits[4:7]} {digits[5:8]}"
    if kind == "email":
        return f"{word}.{digits[:4]}@example.org"
    if kind == "password":
        return f"{word}-{digits[:3]}"
    raise AssertionError(kind)


@st.composite
def scenarios(draw) -> Scenario:
    names = draw(st.permutations(sorted(TEMPLATES)))
    made_up = st.lists(st.sampled_from(SYLLABLES), min_size=3, max_size=3).map("".join)
    words = iter(draw(st.lists(made_up, min_size=12, max_size=12, unique=True)))
    numbers = iter(draw(st.lists(st.integers(10**8, 10**9 - 1), min_size=12, max_size=12, unique=True)))
    paths = draw(st.permutations([*IN_WORDS, *BY_ID, KEEP, KEEP]))

    def fact(name: str, path: str, templates=TEMPLATES) -> Fact:
        template = templates[name]
        value = make_value(template.value, next(words), next(numbers))
        return Fact(
            template=name,
            value=value,
            statement=draw(st.sampled_from(template.statements)).format(v=value),
            path=path,
            request=draw(st.sampled_from(template.requests)).format(v=value) if path in IN_WORDS else "",
            ingested=draw(st.booleans()),
            restated=path not in ("retention", "erasure") and draw(st.booleans()),
            edited=path != "retention" and draw(st.booleans()),
        )

    facts = [fact(name, path) for name, path in zip(names, paths, strict=False)]
    retained = [fact(name, "retention", RETAINED) for name in RETAINED]
    erased = [fact(name, "erasure") for name in names[len(paths) : len(paths) + 2]]
    return Scenario(facts=facts, retained=retained, erased=erased)


# --- talking to the service -------------------------------------------------------------------------------

_tenants = itertools.count()
_server, MCP_TOOLS = build_server_with_tools()


@dataclasses.dataclass
class World:
    tenant: object
    space: Space
    doomed: Space  # erased at the end
    secret: str
    client: object
    console: Client
    sessions: itertools.count = dataclasses.field(default_factory=itertools.count)
    turn_ids: list = dataclasses.field(default_factory=list)
    memory_ids: set = dataclasses.field(default_factory=set)  # statements, not topic rows
    session_ids: dict = dataclasses.field(default_factory=dict)  # space external id -> session ids

    def session(self, space) -> str:
        session_id = f"chat-{next(self.sessions)}"
        self.session_ids.setdefault(space.external_id, []).append(session_id)
        return session_id

    def space_of(self, fact: Fact) -> Space:
        return self.doomed if fact.path == "erasure" else self.space


def new_world() -> World:
    n = next(_tenants)
    tenant = create_tenant(name=f"Tenant {n}", slug=f"forgets-{n}")
    secret = issue_api_key(tenant=tenant, name="admin", scopes=["turns", "admin"]).secret
    space = make_space(tenant, "customer", settings={"keep_transcripts": True})
    doomed = make_space(tenant, "erased-customer", settings={"keep_transcripts": True})
    operator = create_operator(tenant=tenant, username=f"operator-{n}", password="a-long-password").user
    console = Client()
    console.force_login(operator)
    return World(tenant, space, doomed, secret, api_client(secret), console)


def said(
    world: World, space, text: str, *, ingested: bool = False, at: datetime.datetime | None = None, answer: str = ""
) -> dict:
    """``answer``: the agent's reply, a line of the transcript after the customer's or recorded for the turn."""
    session = world.session(space)
    stamp = {"at": at.isoformat()} if at else {}
    if ingested:
        url = reverse("transcript-ingest", args=[space.external_id]) + "?wait=true"
        messages = [{"role": "customer", "content": text, "id": session, **stamp}]
        messages += [{"role": "agent", "content": answer}] if answer else []
        body = {"session_id": session, "messages": messages}
    else:
        url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
        body = {"message": text, "session_id": session, "message_id": session, **stamp}
    response = world.client.post(url, body, format="json")
    assert response.status_code in (200, 201), response.content
    result = response.json()
    world.turn_ids.append(result["turn_id"])
    if answer and not ingested:
        response = world.client.post(reverse("turn-reply", args=[space.external_id, result["turn_id"]]),
                                     {"content": answer}, format="json")  # fmt: skip
        assert response.status_code == 201, response.content
    world.memory_ids.update(
        m["id"] for m in result.get("created", []) + result.get("merged", []) if m["kind"] != "topic"
    )
    return result


def mcp(world: World, tool: str, **arguments) -> str:
    """An MCP tool called in process, as the server calls it, with the key in the request's header. The tool
    reaches the API over WSGI in this thread; as in Django's test client, the request signals must not close
    the connection that holds the test's transaction."""
    context = types.SimpleNamespace(headers={"authorization": f"Bearer {world.secret}"})
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        return json.dumps(MCP_TOOLS[tool](context, **arguments), default=str)
    except ToolError as error:
        return str(error)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def rows_stating(space, value: str, *, current: bool = True) -> list[Memory]:
    with scope.tenant_scope(space.tenant_id, space):
        rows = Memory.objects.filter(space=space, superseded_by__isnull=current).exclude(kind="topic")
        return [m for m in rows if value.lower() in m.content.lower()]


def rows_of(space) -> list:
    with scope.tenant_scope(space.tenant_id, space):
        return [(m.kind, m.content, m.superseded_by_id) for m in Memory.objects.filter(space=space)]


def answer(fact: Fact) -> str:
    """The agent's reply, quoting the value. None to what the sweep expires: a reply today is activity in the
    task's session, which would keep the task."""
    return "" if fact.path == "retention" else f"Noted, {fact.value}."


def store(world: World, scenario: Scenario) -> None:
    for fact in scenario.facts + scenario.retained + scenario.erased:
        at = timezone.now() - LONG_AGO if fact.path == "retention" else None
        said(world, world.space_of(fact), fact.statement, ingested=fact.ingested, at=at, answer=answer(fact))
    for fact in scenario.everything():
        if fact.restated:  # later, in another session: merged into the same row
            said(world, world.space_of(fact), fact.statement, ingested=not fact.ingested, answer=answer(fact))
        if fact.edited:
            space = world.space_of(fact)
            rows = rows_stating(space, fact.value)
            assert len(rows) == 1, f"not stored once: {fact} {rows_of(space)}"
            [row] = rows
            response = world.client.patch(reverse("memory-detail", args=[space.external_id, row.pk]),
                                          {"content": f"Checked: {row.content}"}, format="json")  # fmt: skip
            assert response.status_code == 200, response.content
    # Stored as meant, or the searches below would prove nothing.
    for fact in scenario.everything():
        space = world.space_of(fact)
        current = rows_stating(space, fact.value)
        assert len(current) == 1, f"not stored once: {fact} {rows_of(space)}"
        [row] = current
        if fact.path == "retention":
            assert row.kind == fact.template, fact
        if fact.restated:
            assert row.mention_count == 2 and len(row.earlier_source_message_ids) == 1, (fact, rows_of(space))
        history = rows_stating(space, fact.value, current=False)
        assert len(history) == fact.edited, (fact, rows_of(space))
        fact.contents = sorted(r.content for r in current + history)


def forget(world: World, scenario: Scenario) -> None:
    space = world.space
    kept = [f.value.lower() for f in scenario.kept()]
    for fact in scenario.facts:
        rows = rows_stating(space, fact.value)
        assert len(rows) == 1, f"gone before its turn: {fact} {rows_of(space)}"
        [row] = rows
        if fact.path == "conversation":
            body = said(world, space, fact.request)
            # The agent says the confirmation back and records its reply, as the MCP server's instructions ask.
            response = world.client.post(reverse("turn-reply", args=[space.external_id, body["turn_id"]]),
                                         {"content": body["confirmation"]}, format="json")  # fmt: skip
            assert response.status_code == 201, response.content
        elif fact.path == "api_forget":
            response = world.client.post(reverse("forget", args=[space.external_id]), {"utterance": fact.request},
                                         format="json")  # fmt: skip
            assert response.status_code == 200, response.content
            body = response.json()
        elif fact.path == "mcp_forget":
            body = json.loads(mcp(world, "forget_memories", space=space.external_id, utterance=fact.request))
        elif fact.path == "api_delete":
            response = world.client.delete(reverse("memory-detail", args=[space.external_id, row.pk]))
            assert response.status_code == 204, response.content
            continue
        elif fact.path == "console":
            response = world.console.post(reverse("console:memory-delete", args=[space.external_id, row.pk]))
            assert response.status_code == 302, response.content
            continue
        else:
            continue
        forgotten = [f["content"] for f in body["forgotten"] if f["kind"] != "topic"]
        assert forgotten == [row.content], (fact, body)
        assert not [c for c in forgotten if any(v in c.lower() for v in kept)], (fact, body)
    with scope.tenant_scope(space.tenant_id, space):
        report = expire_space(Space.objects.select_related("tenant").get(pk=space.pk))
    assert (report.tasks, report.events) == (1, 1), report
    response = world.client.delete(reverse("space-detail", args=[world.doomed.external_id]))
    assert response.status_code == 204, response.content


# --- where text and values can live -----------------------------------------------------------------------


def lowered(texts) -> str:
    return "\n".join(str(t) for t in texts if t is not None).lower()


def holds(text: str, value: str) -> bool:
    """The value as a whole in the (lower-cased) text: not six digits that happen to be inside a hex digest.
    (No regular expression: the search would leave the value in the regular-expression cache it searches.)"""
    value = value.lower()
    at = text.find(value)
    while at >= 0:
        before, after = text[at - 1 : at], text[at + len(value) : at + len(value) + 1]
        if not (before.isalnum() or after.isalnum()):
            return True
        at = text.find(value, at + 1)
    return False


def stored_places(world: World) -> dict[str, str]:
    """The rows, decrypted: memories current and past, topic rows, transcript lines, turn records."""
    with scope.tenant_scope(world.tenant):
        rows = list(Memory.objects.defer("embedding"))
        messages = {m.pk: m for m in Message.objects.defer("pending_embedding")}
        turns = list(Turn.objects.all())
        for item in (*rows, *messages.values(), *turns):  # each read under its own space's key
            with scope.tenant_scope(world.tenant, item.space_id):
                for field in ("content", "topic", "rejected"):
                    getattr(item, field, None)
    statements = [r for r in rows if r.kind != "topic"]
    merged_ids = {i for r in rows for i in r.earlier_source_message_ids}
    return {
        "memory rows": lowered(x for r in statements if r.superseded_by_id is None for x in (r.content, r.topic)),
        "memory history": lowered(x for r in statements if r.superseded_by_id for x in (r.content, r.topic)),
        "topic rows": lowered(x for r in rows if r.kind == "topic" for x in (r.content, r.topic)),
        "transcript lines": lowered(m.content for m in messages.values()),
        "merged mentions": lowered(messages[i].content for i in merged_ids if i in messages),
        "turn records": lowered(x for t in turns for x in (t.rejected, t.error, json.dumps(t.forget_reply))),
    }


def index_entries(world: World) -> dict:
    """Every blind-index entry of each space: memories' keywords and topics, transcript lines' keywords."""
    found: dict = {}
    with scope.tenant_scope(world.tenant):
        for space_id, digests, topic in Memory.objects.values_list("space_id", "keyword_digests", "topic_digest"):
            found.setdefault(space_id, set()).update([*digests, topic])
        for space_id, digests in Message.objects.values_list("space_id", "keyword_digests"):
            found.setdefault(space_id, set()).update(digests)
    return found


def own_tokens(scenario: Scenario, fact: Fact) -> set[str]:
    """The value's tokens that nothing else of the example says: finding one is finding this value."""
    others = [f.value for f in scenario.everything() if f is not fact]
    said_around = search_tokens(fact.statement.replace(fact.value, " ")) | {"checked"}
    return search_tokens(fact.value) - set().union(*(search_tokens(v) for v in others)) - said_around


def with_vector(world: World, space, content: str) -> bool:
    """A stored vector of exactly this text: a memory's, or a transcript line's pending one."""
    [vector] = embed_for_space(space.id, [content])
    with scope.tenant_scope(world.tenant, space):
        near = Memory.objects.annotate(d=CosineDistance("embedding", vector)).filter(d__lt=1e-3).exists()
        pending = Message.objects.filter(pending_embedding__isnull=False).annotate(
            d=CosineDistance("pending_embedding", vector)).filter(d__lt=1e-3).exists()  # fmt: skip
    return near or pending


def api_places(world: World, scenario: Scenario) -> dict[str, str]:
    client, external_id = world.client, world.space.external_id
    recalled = [
        client.post(reverse("recall", args=[external_id]), {"query": f.value, "provenance": True}, format="json")
        for f in scenario.everything()
    ]
    listed = client.get(reverse("memory-list", args=[external_id]), {"include_superseded": "true"})
    # Each memory's history: this version and the ones before it (what the detail view shows, and more).
    histories = [client.get(reverse("memory-history", args=[external_id, m])) for m in sorted(world.memory_ids)]
    turns = [client.get(reverse("turn-detail", args=[turn_id])) for turn_id in world.turn_ids]
    export = b"".join(client.get(reverse("space-export", args=[external_id])).streaming_content).decode()
    audit = [client.get(reverse("deletion-list")), client.get(reverse("deletion-list"), {"format": "csv"})]
    return {
        "recall (with provenance)": lowered(r.content.decode() for r in recalled),
        "memory API (list, history)": lowered(r.content.decode() for r in [listed, *histories]),
        "turn view (API)": lowered(r.content.decode() for r in turns),
        "export": export.lower(),
        "deletion audit": lowered(r.content.decode() for r in audit),
    }


def console_places(world: World) -> dict[str, str]:
    with scope.tenant_scope(world.tenant):
        space_of_turn = dict(Turn.objects.values_list("id", "space__external_id"))
    turns = [
        world.console.get(reverse("console:turn", args=[space_of_turn.get(uuid.UUID(t), "erased-customer"), t]))
        for t in world.turn_ids
    ]
    transcripts = [
        world.console.get(reverse("console:transcript", args=[external_id, session_id]))
        for external_id, sessions in world.session_ids.items()
        for session_id in sessions
    ]
    space_page = world.console.get(reverse("console:space", args=[world.space.external_id]))
    return {
        "console (space, transcripts)": lowered(r.content.decode() for r in [space_page, *transcripts]),
        "turn view (console)": lowered(r.content.decode() for r in turns),
    }


def mcp_places(world: World, scenario: Scenario) -> str:
    external_id = world.space.external_id
    said_back = [mcp(world, "list_memories", space=external_id, limit=200)]
    said_back += [mcp(world, "recall_memories", space=external_id, query=f.value, provenance=True)
                  for f in scenario.everything()]  # fmt: skip
    said_back += [mcp(world, "get_memory", space=external_id, memory_id=m) for m in sorted(world.memory_ids)]
    said_back += [mcp(world, "get_turn", turn_id=t) for t in world.turn_ids]
    return lowered(said_back)


def django_cache() -> str:
    """Every entry of the (database) cache, unpickled: throttles, rate limits, whatever else is kept there."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT cache_key, value FROM engram_cache")
        return lowered(f"{key} {pickle.loads(base64.b64decode(value))!r}" for key, value in cursor.fetchall())


def _strings(value, depth: int = 0):
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes) and len(value) < 4096:
        yield value.decode("utf-8", "replace")
    elif depth < 3 and isinstance(value, tuple | list | frozenset | set):
        for item in value:
            yield from _strings(item, depth + 1)
    elif depth < 3 and isinstance(value, dict) and len(value) < 200_000:
        for key, item in value.items():
            yield from _strings(key, depth + 1)
            yield from _strings(item, depth + 1)


# What functools.lru_cache and functools.cache wrap a function in, whatever its size.
FUNCTOOLS_CACHE = type(functools.lru_cache(lambda: None))


def process_caches() -> dict[str, str]:
    """What this process keeps between requests, cache by cache: every functools cache (ours and the
    libraries', the lemmatiser's among them), the embedding caches, the lemmas, the per-space language memory
    and the regular-expression cache."""
    texts: dict[str, list[str]] = {}
    for obj in gc.get_objects():
        kind = type(obj)  # not isinstance: that reads __class__, and a lazy object would set itself up
        if kind is FUNCTOOLS_CACHE:
            name = f"process cache {getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', '?')}"
            for referent in gc.get_referents(obj):
                if not callable(referent) and not isinstance(referent, types.ModuleType):
                    texts.setdefault(name, []).extend(_strings(referent))
        elif issubclass(kind, CachingEmbedder):
            texts.setdefault("process cache: embeddings", []).extend(_strings(obj.cached_keys()))
    texts["process cache: lemmas"] = list(_strings(analysis.LEMMAS.entries()))
    texts["process cache: known words"] = list(_strings(analysis.KNOWN_WORDS.entries()))
    texts["process cache: languages"] = list(_strings(analysis.SPACE_LANGUAGES.entries()))
    texts["process cache: regular expressions"] = list(_strings([list(getattr(re, "_cache", {}))]))
    return {name: lowered(strings) for name, strings in texts.items()}


def database_as_stored(world: World) -> str:
    """Every row of every table the application's role reads, as stored (ciphertext stays ciphertext: this
    finds plaintext where there should be none). Columns of numbers, times, ids and vectors are left out: no text
    is kept in them, and six digits of a value could be a time's microseconds."""
    with scope.tenant_scope(world.tenant), connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'bytea') "
            "ORDER BY table_name, ordinal_position"
        )
        columns: dict[str, list[str]] = {}
        for table, column in cursor.fetchall():
            columns.setdefault(table, []).append(column)
        texts, unreadable = [], []
        for table, names in columns.items():
            quoted = ", ".join(f"{connection.ops.quote_name(c)}::text" for c in names)
            try:
                with transaction.atomic():
                    cursor.execute(f"SELECT concat_ws(' | ', {quoted}) FROM {connection.ops.quote_name(table)}")
                    texts.extend(row[0] for row in cursor.fetchall())
            except Exception as error:  # a table this role may not read holds nothing it wrote
                unreadable.append(f"{table}: {type(error).__name__}")
    assert unreadable == [], unreadable  # so far the role reads every table: say so if that changes
    return lowered(texts)


class Recorded(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(f"{record.name} {record.getMessage()} {record.exc_text or ''} {record.__dict__}")


# --- the property -----------------------------------------------------------------------------------------


@settings(
    max_examples=3,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # an example is seconds of turns: no shrinking, the scenario is noted
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(scenario=scenarios())
def test_forgetting_through_every_path_leaves_the_value_nowhere(db, scenario):
    note(f"scenario: {scenario}")
    world = new_world()  # a tenant of its own per example: one test transaction holds them all
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    telemetry.use_tracer_provider(provider)
    logs = Recorded()
    logging.getLogger().addHandler(logs)
    try:
        store(world, scenario)
        forget(world, scenario)
        places = {
            **stored_places(world),
            **api_places(world, scenario),
            **console_places(world),
            "MCP tools": mcp_places(world, scenario),
            "Django cache": django_cache(),
            **process_caches(),
            "spans": lowered(
                f"{s.name} {dict(s.attributes)} {[dict(e.attributes or {}) for e in s.events]} {s.status.description}"
                for s in spans.get_finished_spans()
            ),  # fmt: skip
            "logs": lowered(logs.lines),
            "database as stored": database_as_stored(world),
        }
        index = index_entries(world)
    finally:
        logging.getLogger().removeHandler(logs)
        telemetry.use_tracer_provider(None)
        provider.shutdown()

    leftovers: dict[str, list] = {}
    for fact in scenario.forgotten():
        space = world.space_of(fact)
        for place, text in places.items():
            if holds(text, fact.value):
                leftovers.setdefault(place, []).append((fact.path, fact.value))
        if fact.path == "erasure":
            # The space's key went with it: no digest or vector of the space can be made again, nor may any be left.
            if space.id in index:
                leftovers.setdefault("keyword index", []).append((fact.path, fact.value))
            continue
        tokens = own_tokens(scenario, fact)
        assert tokens, fact
        if index.get(space.id, set()) & set(keyword_digests(space.id, tokens)):
            leftovers.setdefault("keyword index", []).append((fact.path, fact.value))
        for content in fact.contents:
            if with_vector(world, space, content):
                leftovers.setdefault("vectors", []).append((fact.path, content))
    assert leftovers == {}

    # The same searches find what was kept: they would have found a leftover.
    for fact in scenario.kept():
        where = ["memory rows", "transcript lines", "recall (with provenance)", "memory API (list, history)",
                 "turn view (API)", "export", "console (space, transcripts)", "turn view (console)",
                 "MCP tools"]  # fmt: skip
        if fact.edited:
            where.append("memory history")
        if fact.restated:
            where.append("merged mentions")
        assert [place for place in where if not holds(places[place], fact.value)] == [], fact
        assert index[world.space.id] & set(keyword_digests(world.space.id, own_tokens(scenario, fact))), fact
        assert all(with_vector(world, world.space, content) for content in fact.contents), fact


# --- an agent's reply quoting a fact (more in test_forgetting_replies.py) -----------------------------------


def transcript_lines(space) -> list[str]:
    with scope.tenant_scope(space.tenant_id, space):
        return [m.content for m in Message.objects.filter(space=space) if m.content]


def test_an_agents_reply_quoting_a_forgotten_fact_is_not_left_in_the_transcript(client_a, space_a):
    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    client_a.patch(reverse("space-detail", args=[space_a.external_id]), {"settings": {"keep_transcripts": True}},
                   format="json")  # fmt: skip
    turn = client_a.post(url, {"message": "Our dog is called Zorblatquib.", "session_id": "a"}, format="json").json()
    reply = reverse("turn-reply", args=[space_a.external_id, turn["turn_id"]])
    assert client_a.post(reply, {"content": "What a lovely name, Zorblatquib!"}, format="json").status_code == 201
    body = client_a.post(url, {"message": "Forget what you know about Zorblatquib.", "session_id": "b"}, format="json")
    assert [f["content"] for f in body.json()["forgotten"] if f["kind"] != "topic"] == [
        "Our dog is called Zorblatquib."
    ]
    assert not [line for line in transcript_lines(space_a) if "zorblatquib" in line.lower()]


# --- a phone number beside other long numbers (more, in other languages, in test_forget_numbers.py) ---------


def test_forget_my_phone_number_takes_the_phone_number_not_another_long_number(client_a, space_a):
    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    for n, message in enumerate(["My phone number is +10 129 089 894.", "My PIN is 178723005."]):
        assert client_a.post(url, {"message": message, "session_id": f"s{n}"}, format="json").status_code == 201
    body = client_a.post(reverse("forget", args=[space_a.external_id]),
                         {"utterance": "Please forget my phone number."}, format="json").json()  # fmt: skip
    assert [f["content"] for f in body["forgotten"] if f["kind"] != "topic"] == ["My phone number is +10 129 089 894."]
    assert rows_stating(space_a, "178723005") != []


def test_a_phone_number_does_not_replace_an_account_number(client_a, space_a):
    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    for n, message in enumerate(["My account number is 574354.", "My phone number is +77 010 510 101."]):
        assert client_a.post(url, {"message": message, "session_id": f"s{n}"}, format="json").status_code == 201
    assert rows_stating(space_a, "574354") != []
