"""Review attacks: data_key_for answering from its cache across tenants, and recall's one-statement SQL."""

import pytest
from django.db import transaction
from django.urls import reverse

from memory.models import Memory
from tenants import scope
from tenants.space_keys import SpaceKeyUnavailable, data_key_cache, data_key_for
from tests.support.recall import tell

pytestmark = pytest.mark.django_db


def test_data_key_for_refuses_another_tenants_space_when_not_cached(space_a, space_b):
    data_key_cache.clear()
    with scope.tenant_scope(space_b.tenant_id, space_b), pytest.raises(SpaceKeyUnavailable):
        data_key_for(space_a.id)


@pytest.mark.parametrize(
    "query",
    [
        "vans'; DROP TABLE memory_memory; --",
        "vans %s %(x)s {} {{}} ) UNION SELECT * FROM tenants_apikey --",
        "vans\x00 nul",
        "vans $$ $1 ::text[] ANY(",
    ],
)
def test_hostile_query_text_is_data(client_a, client_b, space_a, space_b, query):
    tell(client_a, space_a, "We run a fleet of four vans.")
    tell(client_b, space_b, "Bob runs a fleet of red vans.")
    response = client_a.post(reverse("recall", args=[space_a.external_id]), {"query": query}, format="json")
    assert response.status_code in (200, 400), response.content
    if response.status_code == 200:
        assert all("Bob" not in m["content"] for m in response.json()["memories"])
    assert (
        client_b.post(reverse("recall", args=[space_b.external_id]), {"query": "vans"}, format="json").status_code
        == 200
    )


@pytest.mark.parametrize(
    "body",
    [
        {"query": "vans", "kinds": ["fact'; --"]},
        {"query": "vans", "kinds": "fact"},
        {"query": "vans", "limit": "5; DROP TABLE x"},
        {"query": "vans", "limit": 0},
        {"query": "vans", "limit": 10**9},
        {"query": "vans", "kinds": []},
    ],
)
def test_hostile_kinds_and_limit_are_a_400(client_a, space_a, body):
    response = client_a.post(reverse("recall", args=[space_a.external_id]), body, format="json")
    assert response.status_code == 400, response.content


def test_candidate_statement_stays_in_the_space_with_a_tenant_wide_scope(client_a, space_a, space_a2):
    """Defence in depth: with only the tenant in scope (RLS shows both spaces), the one statement still
    returns only the asked space's rows (space_id in every part and in the outer select)."""
    from memory.recall import search

    tell(client_a, space_a2, "The depot in Leeds opens at seven.", "Leeds depot vans are serviced on Fridays.")
    tell(client_a, space_a, "The depot in York opens at nine.")
    with transaction.atomic():
        scope.enter_scope(space_a.tenant_id)  # tenant-wide: both spaces visible to RLS
        assert Memory.objects.filter(space=space_a2).exists(), "the attack needs the other space visible"
        result = search.recall(space=space_a, query="When does the Leeds depot open on Fridays?")
        seen = {str(s.item.space_id) for s in result.candidates}
        contents = " ".join(str(h.get("content", "")) for h in result.hits)
        assert "Leeds" not in contents, contents
        assert result.candidates, "nothing considered: the attack proved nothing"
        assert seen <= {str(space_a.pk)}, seen
