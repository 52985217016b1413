"""schemathesis against the project's own OpenAPI schema, authenticated, every endpoint: no 5xx,
every response matches the schema (status code, content type, headers, body), and requests that
violate the schema are refused.

`make test` runs a bounded pass (ENGRAM_FUZZ_EXAMPLES, default 8 per operation); `make fuzz` a
longer one. Left out on purpose: ``positive_data_acceptance`` — a schema-valid request can still
be refused for a reason no schema can express (a key id this server does not have, a duplicate
external id, an episode in an end-user space), and those refusals are the point.
"""

import os

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

# The schema is generated in process (fetching it through the app would need the database at
# collection time); calls go to the WSGI app itself — not config.wsgi, which checks the database
# role and warms up the models at import.
# A refused request may also be a 413 (too large) — the body limit applies before any parsing.
CONFIG = SchemathesisConfig.from_dict({
    "checks": {
        "negative_data_rejection": {
            "expected-statuses": ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "429"]
        },
        "positive_data_acceptance": {"enabled": False},
    }
})  # fmt: skip
schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True), config=CONFIG)
schema.app = get_wsgi_application()
MAX_EXAMPLES = int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "8"))


@pytest.fixture
def auth_header(key_a, space_a):
    """Tenant A's admin key, inside the test's transaction (as Django's test client does, the
    app must not close the test's connection after each call)."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield {"Authorization": f"Bearer {key_a.secret}"}
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    # `make test` runs a fixed sample (the same on every machine); `make fuzz` explores.
    derandomize=os.environ.get("ENGRAM_FUZZ_DERANDOMIZE") == "1",
)
def test_every_endpoint_answers_within_its_schema_and_never_with_a_5xx(case, auth_header):
    case.call_and_validate(headers=auth_header)
