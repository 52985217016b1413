"""Fixtures: two tenants (Alice's and Bob's companies), their spaces and keys, and an outsider.

Everything runs against the real PostgreSQL (the embedded server unless DATABASE_URL is set) as
the runtime role, which owns nothing (the owner role only creates, migrates, flushes and drops the
test database: database/roles.py), so row-level security is in force in every test.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tenants import scope, spaces
from tenants.api_keys import issue_api_key
from tenants.tenant_admin import create_tenant


@pytest.fixture
def tenant_a(db):
    return create_tenant(name="Alice Logistics", slug="alice")


@pytest.fixture
def tenant_b(db):
    return create_tenant(name="Bob Bakery", slug="bob")


def make_space(tenant, external_id, **kwargs):
    with scope.tenant_scope(tenant):
        return spaces.create_space(tenant=tenant, external_id=external_id, **kwargs)


@pytest.fixture
def space_a(tenant_a):
    return make_space(tenant_a, "customer-1", display_name="Customer one")


@pytest.fixture
def space_a2(tenant_a):
    return make_space(tenant_a, "customer-2")


@pytest.fixture
def space_b(tenant_b):
    return make_space(tenant_b, "customer-1", display_name="Bob's customer")


def api_client(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


@pytest.fixture
def key_a(tenant_a):
    return issue_api_key(tenant=tenant_a, name="alice admin", scopes=["turns", "admin"])


@pytest.fixture
def key_b(tenant_b):
    return issue_api_key(tenant=tenant_b, name="bob admin", scopes=["turns", "admin"])


@pytest.fixture
def client_a(key_a):
    return api_client(key_a.secret)


@pytest.fixture
def client_b(key_b):
    return api_client(key_b.secret)


@pytest.fixture
def outsider():
    """Charlie: no key at all."""
    return APIClient()


@pytest.fixture
def superuser_conninfo(settings) -> str:
    """A psycopg connection string for a database superuser on the test database.

    The embedded server's superuser, or ENGRAM_TEST_SUPERUSER_URL's role when DATABASE_URL is set.
    """
    from database.roles import superuser_conninfo

    return superuser_conninfo()


@pytest.fixture
def scripted_chat():
    from tests.support.model_servers import ScriptedChat, serving

    chat = ScriptedChat()
    with serving(chat.server) as url:
        chat.url = url
        yield chat


@pytest.fixture(scope="session")
def local_embedding_url():
    from tests.support.model_servers import embedding_server

    with embedding_server() as url:
        yield url


def use_local_models(settings, chat_url: str, embedding_url: str) -> None:
    """Extraction and embeddings through the real openai client against servers on this machine."""
    settings.ENGRAM_EXTRACTION_ENGINE = "openai"
    settings.OPENAI_BASE_URL = chat_url
    settings.OPENAI_API_KEY = "test-key"
    settings.ENGRAM_EMBEDDING_ENGINE = "openai"
    settings.ENGRAM_EMBEDDING_BASE_URL = embedding_url
    settings.ENGRAM_MODEL_MAX_RETRIES = 0
    settings.ENGRAM_MODEL_TIMEOUT_SECONDS = 5


@pytest.fixture
def openai_engines(settings, scripted_chat, local_embedding_url):
    """A scripted chat model: it answers what the test sets."""
    use_local_models(settings, scripted_chat.url, local_embedding_url)
    return scripted_chat


@pytest.fixture
def hostile(settings, local_embedding_url):
    """A chat model that lies on purpose, in the mode the test chooses (tests/support/model_servers.py)."""
    from tests.support.model_servers import HostileChat, serving

    chat = HostileChat()
    with serving(chat.server) as url:
        use_local_models(settings, url, local_embedding_url)
        yield chat


@pytest.fixture(autouse=True)
def fresh_cache(request, django_db_blocker):
    """The login throttle counts in the (database) cache: no test inherits another's (API rate limits
    count per key, and every test issues its own keys).
    Tests without the database have no cache to clear."""
    uses_database = request.node.get_closest_marker("django_db") is not None or bool(
        {"db", "transactional_db", "live_server"} & set(request.fixturenames)
    )
    if not uses_database:
        yield
        return
    from django.core.cache import cache

    with django_db_blocker.unblock():
        cache.clear()
    yield
    with django_db_blocker.unblock():
        cache.clear()


@pytest.fixture
def detections(monkeypatch):
    """The texts whose language is detected (not answered from memory), with an empty per-space memory."""
    from memory.text import analysis

    detected: list[str] = []
    real = analysis.detect_language_afresh

    def counting(text):
        detected.append(text)
        return real(text)

    monkeypatch.setattr(analysis, "detect_language_afresh", counting)
    monkeypatch.setattr(analysis, "SPACE_LANGUAGES", analysis.SpaceLanguages(max_entries=1000))
    return detected


@pytest.fixture
def embedder(monkeypatch):
    """The real embedder, counting its calls (what a turn embeds, and how often)."""
    from memory.text import vectors
    from tests.support.worker import CountingEmbedder

    counting = CountingEmbedder(vectors.get_embedder())
    monkeypatch.setattr(vectors, "get_embedder", lambda: counting)
    # The attribute names topics take are embedded once per process: each test counts from a process that has not.
    monkeypatch.setattr(vectors, "VOCABULARY_VECTORS", {})
    return counting
