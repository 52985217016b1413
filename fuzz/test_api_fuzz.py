"""schemathesis against the project's own OpenAPI schema, authenticated, every endpoint: no 5xx,
and every response matches the schema.

`make fuzz` runs it. It is not yet part of `make test`: the first runs found no server error but
several conformance findings (schema-violating requests accepted, e.g. `offset=null`; valid-looking
requests rejected, e.g. an empty `message` the schema does not forbid) that the schema and the
serializers still have to be brought into line on.
"""

import os

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings

# The schema is generated in process (fetching it through the app would need the database at
# collection time); calls go to the WSGI app itself — not config.wsgi, which checks the database
# role and warms up the models at import.
schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
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
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_endpoint_answers_within_its_schema_and_never_with_a_5xx(case, auth_header):
    case.call_and_validate(headers=auth_header)
