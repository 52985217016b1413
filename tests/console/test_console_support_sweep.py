"""Support staff see no memory content, not even by distance: every console URL and partial,
fetched as support over a tenant with memories, cases, a forget and settings history, shows no
memory text, no distance figure and no sample-query form."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern

from console import urls as console_urls
from memory.models import DeletionAudit, Episode, Memory, Turn
from tenants import scope
from tenants.models import ApiKey, Membership
from tenants.space_settings import effective_settings
from tenants.tenant_admin import create_operator
from tests.conftest import make_space

pytestmark = pytest.mark.django_db

CUSTOMER_SAYS = [
    "We run four delivery vans out of our Brno depot.",
    "Our warehouse code is Zephyr-42.",
    "Please always send invoices to billing@alice.example.",
    "We have four vans at the Brno depot.",
]
SAMPLE_QUERY = "How many vans do they have?"
THREE_DECIMALS = re.compile(r"\d\.\d{3}")


@pytest.fixture
def tenant_with_content(client_a, tenant_a, space_a):
    # Kept transcripts: the turn and session pages then hold customer text that support must not see.
    kept = client_a.patch(f"/api/v1/spaces/{space_a.external_id}", {"settings": {"keep_transcripts": True}},
                          format="json")  # fmt: skip
    assert kept.status_code == 200
    for number, text in enumerate(CUSTOMER_SAYS):
        response = client_a.post(
            f"/api/v1/spaces/{space_a.external_id}/turns?wait=true", {"message": text, "session_id": f"s{number}"},
            format="json",
        )  # fmt: skip
        assert response.status_code == 201
    forget = client_a.post(f"/api/v1/spaces/{space_a.external_id}/forget",
                           {"utterance": "Forget the warehouse code."}, format="json")  # fmt: skip
    assert forget.status_code == 200
    client_a.patch(f"/api/v1/spaces/{space_a.external_id}", {"settings": {"recall_distance": 0.12}}, format="json")
    shared = make_space(tenant_a, "support-agents", kind="shared")
    episode = client_a.post(
        "/api/v1/spaces/support-agents/episodes",
        {"inputs": {"question": "The parcel arrived crushed, refund please"}, "output": "Refund of 129 EUR issued",
         "outcome": "resolved with a refund", "agent": "triage",
         "feedback": {"sentiment": "positive", "comment": "Fast refund"}},
        format="json",
    )  # fmt: skip
    assert episode.status_code == 201
    resolve = {"input": "The courier lost parcel 7781", "outcome": "Send voucher VX-55", "resolution_comment": "ok"}
    assert client_a.post("/api/v1/spaces/support-agents/escalations/resolve", resolve, format="json").status_code == 201
    return space_a, shared


def secrets_of(tenant, spaces) -> list[str]:
    """Every text support must never read: memories (and their history), cases, and the sample query."""
    texts = [SAMPLE_QUERY]
    for space in spaces:
        with scope.tenant_scope(tenant, space):
            texts += [m.content for m in Memory.objects.filter(space=space)]
            for e in Episode.objects.filter(space=space):
                texts += [t for t in (e.output, e.outcome, e.resolution_comment, e.feedback_comment) if t]
                texts += [str(v) for v in e.inputs_dict.values()] if hasattr(e, "inputs_dict") else []
    return [t for t in texts + CUSTOMER_SAYS if len(t) > 6]


def allowed_figures(spaces) -> set[str]:
    """Threshold settings are configuration, not content: their own values may appear."""
    figures = {"0.005"}  # the sliders' step
    for space in spaces:
        with scope.tenant_scope(space.tenant_id, space):
            space.refresh_from_db()  # the fixture changed its settings through the API
            for value in effective_settings(space).values():
                if isinstance(value, float):
                    figures.add(f"{value:.3f}")
    return figures


def concrete_urls(tenant, space, shared) -> dict[str, list[str]]:
    with scope.tenant_scope(tenant, space):
        memory = Memory.objects.filter(space=space).first()
        turn = Turn.objects.filter(space=space).select_related("session").first()
    with scope.tenant_scope(tenant, shared):
        episode = Episode.objects.filter(space=shared).first()
    with scope.tenant_scope(tenant):
        key = ApiKey.objects.first()
        membership = Membership.objects.first()
        audit_space = DeletionAudit.objects.first().space_external_id
    ids = {"memory_id": memory.pk, "episode_id": episode.pk, "key_id": key.pk, "membership_id": membership.pk,
           "turn_id": turn.pk, "session_id": turn.session.external_id}  # fmt: skip
    urls = {}
    for pattern in console_urls.urlpatterns:
        assert isinstance(pattern, URLPattern)
        route = str(pattern.pattern)
        variants = []
        for external_id in (space.external_id, shared.external_id):
            path = "/console/" + route
            path = path.replace("<str:external_id>", external_id)
            for name, value in ids.items():
                path = re.sub(rf"<[a-z]+:{name}>", str(value), path)
            variants.append(path)
        urls[pattern.name] = sorted(set(variants))
    extra = {
        "spaces": ["?q=vans", "?q=customer&page=2"],
        "threshold-preview": [f"?sample_query={SAMPLE_QUERY}&dedup_distance=0.4&recall_distance=0.4"],
        "playground": [f"?space={space.external_id}&message={SAMPLE_QUERY}&mode={m}" for m in
                       ("recall", "forget", "episodes", "escalation")],
        "deletions": [f"?space={audit_space}", "?cause=user_request", "?since=2020-01-01T00:00:00Z"],
        "deletions-csv": [f"?space={audit_space}", "?since=2020-01-01"],
        "space": ["?kind=fact", "?q=vans", "?topic=fleet", "?since=2020-01-01"],
    }  # fmt: skip
    for name, queries in extra.items():
        urls[name] = urls[name] + [urls[name][0] + q for q in queries]
    return urls


def test_support_sees_no_memory_text_no_distance_and_no_sample_query_anywhere(client, tenant_a, tenant_with_content):
    space, shared = tenant_with_content
    secrets = secrets_of(tenant_a, [space, shared])
    allowed = allowed_figures([space, shared])
    support = create_operator(tenant=tenant_a, username="sasha", password="support-password", role="support").user
    client.force_login(support)
    urls = concrete_urls(tenant_a, space, shared)
    assert set(urls) == {p.name for p in console_urls.urlpatterns if p.name not in ("login", "logout")} | {
        "login", "logout"}  # fmt: skip
    seen_ok = 0
    for name, paths in urls.items():
        if name == "logout":
            continue
        for path in paths:
            for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
                responses = [client.get(path, **headers)]
                if name in ("deletion-check", "mark-pair", "episode-add", "thresholds", "members"):
                    responses.append(client.post(path, {"space": space.external_id, "text": CUSTOMER_SAYS[0],
                                                        "sample_query": SAMPLE_QUERY, "first": "", "second": ""},
                                                 **headers))  # fmt: skip
                for response in responses:
                    assert response.status_code < 500, (name, path, response.status_code)
                    page = response.content.decode()
                    for secret in secrets:
                        assert secret not in page, (name, path, secret)
                    assert 'name="sample_query"' not in page, (name, path)
                    figures = set(THREE_DECIMALS.findall(page)) - allowed
                    assert not figures, (name, path, figures)
                    for marker in ("merge-pairs", "histogram", 'class="candidates"', "mark-candidates"):
                        assert marker not in page, (name, path, marker)
                    seen_ok += response.status_code == 200
    assert seen_ok >= 10  # the sweep did read real pages, not only refusals


def test_the_same_pages_show_an_operator_the_distances(client, tenant_a, tenant_with_content):
    """The sweep's markers are real: an operator does get them, so their absence for support means something."""
    space, _ = tenant_with_content
    create_operator(tenant=tenant_a, username="olga", password="operator-password", role="operator")
    client.login(username="olga", password="operator-password")
    preview = client.get(f"/console/spaces/{space.external_id}/thresholds/preview/",
                         {"sample_query": SAMPLE_QUERY, "recall_distance": "0.4"}).content.decode()  # fmt: skip
    assert "histogram" in preview and THREE_DECIMALS.search(preview) and "vans" in preview
    assert 'name="sample_query"' in client.get(f"/console/spaces/{space.external_id}/thresholds/").content.decode()


def test_support_typing_a_sample_query_computes_nothing(client, tenant_a, tenant_with_content, monkeypatch):
    from memory import investigation

    space, _ = tenant_with_content
    calls = []
    monkeypatch.setattr(investigation, "threshold_preview", lambda **kwargs: calls.append(kwargs))
    support = create_operator(tenant=tenant_a, username="sasha", password="support-password", role="support").user
    client.force_login(support)
    response = client.get(f"/console/spaces/{space.external_id}/thresholds/preview/", {"sample_query": SAMPLE_QUERY})
    assert response.status_code == 200 and 'id="preview-hidden"' in response.content.decode()
    assert client.get(f"/console/spaces/{space.external_id}/thresholds/").status_code == 200
    assert calls == []
