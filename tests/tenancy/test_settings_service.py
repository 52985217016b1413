"""One settings service behind the API PATCH and the console save: the same stored result for the same
change, concurrent saves that never lose each other, effective settings that are never stale (a bare
UPDATE, a tenant default that moves, another tenant's cached entry, a caller changing the dictionary it
was handed), and a console form that follows the registry."""

from __future__ import annotations

import html
import re
import threading

import pytest
from django.db import connection
from django.urls import reverse

from tenants import scope, settings_service, space_settings
from tenants.models import SettingsChange, Space, Tenant
from tenants.settings_service import change_space_settings, change_tenant_defaults
from tenants.space_settings import SETTINGS, Setting, effective_settings
from tenants.tenant_admin import create_operator

PASSWORD = "a-long-password"


def login(client, tenant, role="operator"):
    membership = create_operator(tenant=tenant, username=role, password=PASSWORD, role=role)
    client.force_login(membership.user)


def stored(space) -> dict:
    with scope.tenant_scope(space.tenant_id, space):
        return Space.objects.get(pk=space.pk).settings


def patch(client, space, settings):
    return client.patch(reverse("space-detail", args=[space.external_id]), {"settings": settings}, format="json")


def thresholds(space) -> str:
    return reverse("console:thresholds", args=[space.external_id])


def rendered_form(page: str) -> dict:
    """The thresholds form as the browser would post it back untouched (inputs, ticked boxes, markers)."""
    form: dict[str, list[str]] = {}
    for tag in re.findall(r"<input [^>]*>|<textarea [^>]*>[^<]*</textarea>", page.split('id="thresholds"')[1]):
        name = re.search(r'name="([^"]+)"', tag)
        if name is None or name.group(1) in ("csrfmiddlewaretoken", "sample_query"):
            continue
        if 'type="checkbox"' in tag:
            if " checked" in tag:
                form.setdefault(name.group(1), []).append("on")
            continue
        value = re.search(r'value="([^"]*)"', tag) or re.search(r">([^<]*)</textarea>", tag)
        form.setdefault(name.group(1), []).append(html.unescape(value.group(1)))
    return form


# --- one meaning on both paths --------------------------------------------------------------------


@pytest.mark.django_db
def test_the_api_and_the_console_store_the_same_result_for_the_same_change(
    client, client_a, tenant_a, space_a, space_a2
):
    for space in (space_a, space_a2):
        assert patch(client_a, space, {"recall_distance": 0.12, "recall_limit": 5}).status_code == 200
    # The same change: recall distance back to the built-in value (pinned, not dropped), hybrid off,
    # one strategy weight up; the recall limit untouched.
    assert patch(client_a, space_a, {"recall_distance": 0.08, "hybrid": False,
                                     "strategy_weights": {"keyword": 2.0}}).status_code == 200  # fmt: skip
    login(client, tenant_a)
    form = {"recall_distance": "0.08", "recall_limit": "5", "flags_present": ["hybrid", "keep_transcripts"],
            "strategy_weights__keyword": "2", "strategy_weights__vector": "1"}  # fmt: skip
    assert client.post(thresholds(space_a2), form).status_code == 302
    expected = {"recall_distance": 0.08, "recall_limit": 5, "hybrid": False, "strategy_weights": {"keyword": 2.0}}
    assert stored(space_a) == stored(space_a2) == expected
    # Dropping an override: null through the API, "Reset to default" in the console.
    assert patch(client_a, space_a, {"recall_distance": None}).status_code == 200
    assert client.post(thresholds(space_a2), {"reset": "recall_distance"}).status_code == 302
    assert stored(space_a) == stored(space_a2) == {k: v for k, v in expected.items() if k != "recall_distance"}


@pytest.mark.django_db
def test_a_pinned_value_stays_when_the_tenant_default_moves(client_a, tenant_a, space_a, space_a2):
    assert patch(client_a, space_a, {"recall_limit": 8}).status_code == 200  # equal to the built-in default
    with scope.tenant_scope(tenant_a):
        settings_service.change_tenant_defaults(tenant=tenant_a, changes={"recall_limit": 3}, actor="test")
    pinned = client_a.get(reverse("space-detail", args=[space_a.external_id])).json()
    following = client_a.get(reverse("space-detail", args=[space_a2.external_id])).json()
    assert pinned["effective_settings"]["recall_limit"] == 8
    assert following["effective_settings"]["recall_limit"] == 3


@pytest.mark.django_db
def test_an_untouched_console_form_pins_nothing_and_a_flag_without_its_marker_is_left_alone(client, tenant_a, space_a):
    login(client, tenant_a)
    page = client.get(thresholds(space_a)).content.decode()
    form = rendered_form(page)
    assert set(form["flags_present"]) == {s.name for s in SETTINGS.values() if s.kind is bool and not s.shared_only}
    assert client.post(thresholds(space_a), form).status_code == 302
    assert stored(space_a) == {}
    # "hybrid" unticked but its marker missing (a script posting a few fields): not switched off.
    assert client.post(thresholds(space_a), {"recall_limit": "4"}).status_code == 302
    assert stored(space_a) == {"recall_limit": 4}


@pytest.mark.django_db
def test_a_form_opened_before_another_save_does_not_put_the_old_value_back(client, client_a, tenant_a, space_a):
    login(client, tenant_a)
    form = rendered_form(client.get(thresholds(space_a)).content.decode())
    assert form["recall_distance"] == ["0.08"] and "rendered_from" in form
    # While the form is open, an API client changes the recall distance and a flag.
    assert patch(client_a, space_a, {"recall_distance": 0.15, "hybrid": False}).status_code == 200
    form["recall_limit"] = ["4"]  # the operator changes only the limit
    assert client.post(thresholds(space_a), form).status_code == 302
    assert stored(space_a) == {"recall_distance": 0.15, "hybrid": False, "recall_limit": 4}
    damaged = client.post(thresholds(space_a), {**form, "rendered_from": "[1]"})
    assert damaged.status_code == 400 and "reload the page" in damaged.content.decode()


@pytest.mark.django_db
def test_a_bad_value_among_good_ones_is_a_400_and_changes_nothing(client_a, space_a):
    assert patch(client_a, space_a, {"recall_limit": 4}).status_code == 200
    refused = patch(client_a, space_a, {"recall_limit": 6, "forget_floor": 7})
    assert refused.status_code == 400 and "forget_floor" in refused.json()["error"]["details"]
    unknown_drop = patch(client_a, space_a, {"no_such_setting": None})
    assert unknown_drop.status_code == 400 and "no_such_setting" in unknown_drop.json()["error"]["details"]
    assert stored(space_a) == {"recall_limit": 4}


@pytest.mark.django_db
def test_a_renamed_setting_is_still_accepted_and_read_under_its_old_name(client_a, space_a):
    """max_entries_per_turn became max_entries_per_message (docs/api.md): a client sending the old name and a
    space that stored it both keep their limit."""
    assert patch(client_a, space_a, {"max_entries_per_turn": 4}).status_code == 200
    assert stored(space_a) == {"max_entries_per_message": 4}
    with scope.tenant_scope(space_a.tenant_id, space_a):
        space = Space.objects.select_related("tenant").get(pk=space_a.pk)
        space.settings = {"max_entries_per_turn": 5}
        assert effective_settings(space)["max_entries_per_message"] == 5
        space.settings = {"max_entries_per_turn": 5, "max_entries_per_message": 6}
        assert effective_settings(space)["max_entries_per_message"] == 6


@pytest.mark.django_db
def test_the_service_refuses_a_space_object_claiming_another_tenant(tenant_a, tenant_b, space_b):
    forged = Space(pk=space_b.pk, tenant_id=tenant_a.pk, tenant=tenant_a, settings={})
    with scope.tenant_scope(tenant_a), pytest.raises(Space.DoesNotExist):
        settings_service.change_space_settings(space=forged, changes={"recall_limit": 1}, actor="mallory")
    assert stored(space_b) == {}


# --- concurrent saves -----------------------------------------------------------------------------


def _in_thread(target) -> threading.Thread:
    def run():
        try:
            target()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("layer", ["space", "tenant"])
def test_two_concurrent_saves_of_different_settings_both_survive(monkeypatch, tenant_a, space_a, layer):
    """Each save reads the layer, then (held here at a barrier, to make the race certain) writes it.
    Without the row lock both read the same old layer and the later write drops the earlier change;
    with it the second save waits, reads the first one's result and adds to it."""
    barrier = threading.Barrier(2, timeout=2)
    apply_changes = settings_service.apply_changes

    def held_apply(layer_before, cleaned, dropped):
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass  # the other save is waiting on the row lock: it cannot reach the barrier
        return apply_changes(layer_before, cleaned, dropped)

    monkeypatch.setattr(settings_service, "apply_changes", held_apply)

    def save(changes):
        def run():
            with scope.tenant_scope(tenant_a, space_a):
                if layer == "space":
                    settings_service.change_space_settings(space=space_a, changes=changes, actor="test")
                else:
                    settings_service.change_tenant_defaults(tenant=tenant_a, changes=changes, actor="test")

        return run

    threads = [_in_thread(save({"recall_limit": 4})), _in_thread(save({"forget_floor": 0.05}))]
    for thread in threads:
        thread.join(timeout=30)
    with scope.tenant_scope(tenant_a, space_a):
        saved = (
            Space.objects.get(pk=space_a.pk).settings
            if layer == "space"
            else Tenant.objects.get(pk=tenant_a.pk).default_space_settings
        )
        audited = set(SettingsChange.objects.values_list("setting", flat=True))
    assert saved == {"recall_limit": 4, "forget_floor": 0.05}
    assert audited == {"recall_limit", "forget_floor"}


# --- effective settings: cached, never stale ------------------------------------------------------


@pytest.fixture
def two_van_facts(client_a, space_a):
    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    for message in ("We run a fleet of four vans.", "Our vans are serviced in Leeds every March."):
        assert client_a.post(url, {"message": message}, format="json").status_code in (200, 201)


def recalled(client, space) -> int:
    response = client.post(reverse("recall", args=[space.external_id]), {"query": "our vans"}, format="json")
    assert response.status_code == 200, response.content
    return len(response.json()["memories"])


@pytest.mark.django_db
def test_a_save_through_the_api_is_used_by_the_next_recall_in_the_same_process(client_a, space_a, two_van_facts):
    assert recalled(client_a, space_a) == 2  # the effective settings of the space are now cached
    assert patch(client_a, space_a, {"recall_limit": 1}).status_code == 200
    assert recalled(client_a, space_a) == 1
    assert patch(client_a, space_a, {"recall_limit": None}).status_code == 200
    assert recalled(client_a, space_a) == 2


@pytest.mark.django_db(transaction=True)
def test_a_save_in_another_connection_is_seen_by_the_next_recall(client_a, tenant_a, space_a, two_van_facts):
    assert recalled(client_a, space_a) == 2

    def other_process_saves():
        with scope.tenant_scope(tenant_a):
            settings_service.change_tenant_defaults(tenant=tenant_a, changes={"recall_limit": 1}, actor="admin")

    _in_thread(other_process_saves).join(timeout=30)
    assert recalled(client_a, space_a) == 1
    # A write that bypasses the service altogether (a bare UPDATE) is seen too: nothing to invalidate.
    with scope.tenant_scope(tenant_a):
        Tenant.objects.filter(pk=tenant_a.pk).update(default_space_settings={})
    assert recalled(client_a, space_a) == 2


@pytest.mark.django_db
def test_reading_the_effective_settings_costs_no_query_once_the_space_is_read(
    django_assert_num_queries, tenant_a, space_a
):
    from tenants.spaces import find_space

    with scope.tenant_scope(tenant_a):
        space = find_space(tenant=tenant_a, external_id=space_a.external_id)
        with django_assert_num_queries(0):
            first, again = effective_settings(space), effective_settings(space)
    assert first == again == space_settings.merge_layers()
    first["recall_limit"] = 99  # a caller's copy: changing it changes nothing cached
    assert effective_settings(space)["recall_limit"] == 8


@pytest.mark.django_db
def test_a_layer_changed_in_memory_is_never_answered_from_the_cache(tenant_a, space_a):
    from tenants.spaces import find_space

    with scope.tenant_scope(tenant_a, space_a):
        space = find_space(tenant=tenant_a, external_id=space_a.external_id)
        assert effective_settings(space)["recall_limit"] == 8
        space.settings["recall_limit"] = 2  # changed in place, as a caller about to save might
        assert effective_settings(space)["recall_limit"] == 2
        space.tenant.default_space_settings = {"forget_floor": 0.05}
        assert effective_settings(space)["forget_floor"] == 0.05


# --- the registry drives the console form and the API ---------------------------------------------


@pytest.mark.django_db
def test_a_setting_added_to_the_registry_appears_in_the_console_form_and_the_api(
    monkeypatch, client, client_a, tenant_a, space_a
):
    added = [
        Setting("greeting_pause_seconds", int, 2, 0, 30, "Seconds to wait before greeting.", label="Greeting pause"),
        Setting("greet_by_name", bool, False, help="Use the customer's name.", label="Greet by name"),
    ]
    for setting in added:
        monkeypatch.setitem(space_settings.SETTINGS, setting.name, setting)
    login(client, tenant_a)
    page = client.get(thresholds(space_a)).content.decode()
    assert 'name="greeting_pause_seconds"' in page and "Greeting pause (0–30)" in page
    assert 'name="greet_by_name"' in page and 'id="origin-greet_by_name">built-in default' in page
    form = {"greeting_pause_seconds": "5", "flags_present": "greet_by_name", "greet_by_name": "on"}
    assert client.post(thresholds(space_a), form).status_code == 302
    assert stored(space_a) == {"greeting_pause_seconds": 5, "greet_by_name": True}
    bad = client.post(thresholds(space_a), {"greeting_pause_seconds": "31"})
    assert bad.status_code == 400 and "between 0 and 30" in bad.content.decode()
    defaults_page = client.get(reverse("console:tenant-defaults")).content.decode()
    assert 'name="greeting_pause_seconds"' in defaults_page
    assert patch(client_a, space_a, {"greeting_pause_seconds": 7}).status_code == 200
    effective = client_a.get(reverse("space-detail", args=[space_a.external_id])).json()["effective_settings"]
    assert effective["greeting_pause_seconds"] == 7 and effective["greet_by_name"] is True


def fresh(space):
    with scope.tenant_scope(space.tenant_id, space):
        return Space.objects.select_related("tenant").get(pk=space.pk)


@pytest.mark.django_db
def test_saved_value_is_seen_at_once_not_the_cached_one(space_a):
    assert effective_settings(fresh(space_a))["recall_limit"] != 7
    with scope.tenant_scope(space_a.tenant_id, space_a):
        change_space_settings(space=fresh(space_a), changes={"recall_limit": 7}, actor="operator")
    assert effective_settings(fresh(space_a))["recall_limit"] == 7
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Space.objects.filter(pk=space_a.pk).update(settings={})  # a bare UPDATE, no invalidation
    assert effective_settings(fresh(space_a))["recall_limit"] != 7


@pytest.mark.django_db
def test_tenant_default_change_reaches_the_space(space_a, tenant_a):
    effective_settings(fresh(space_a))
    with scope.tenant_scope(tenant_a):
        change_tenant_defaults(tenant=tenant_a, changes={"recall_limit": 9}, actor="operator")
    assert effective_settings(fresh(space_a))["recall_limit"] == 9


@pytest.mark.django_db
def test_another_tenants_settings_never_served(space_a, space_b):
    with scope.tenant_scope(space_a.tenant_id, space_a):
        change_space_settings(space=fresh(space_a), changes={"recall_limit": 3}, actor="operator")
    effective_settings(fresh(space_a))
    assert effective_settings(fresh(space_b))["recall_limit"] != 3


@pytest.mark.django_db
def test_changing_a_nested_value_of_the_returned_dict_changes_nothing_shared(space_a, space_b):
    builtin = dict(SETTINGS["strategy_weights"].default)
    try:
        first = effective_settings(fresh(space_a))
        first["strategy_weights"]["keyword"] = 4.5  # e.g. a playground override applied in place
        again = effective_settings(fresh(space_a))
        other_tenant = effective_settings(fresh(space_b))
        assert again["strategy_weights"]["keyword"] == builtin["keyword"], "cached entry of this space changed"
        assert other_tenant["strategy_weights"]["keyword"] == builtin["keyword"], "another tenant's settings changed"
    finally:
        SETTINGS["strategy_weights"].default.clear()
        SETTINGS["strategy_weights"].default.update(builtin)


@pytest.mark.django_db
def test_cache_hit_copy_is_deep_enough(space_a):
    with scope.tenant_scope(space_a.tenant_id, space_a):
        change_space_settings(space=fresh(space_a), changes={"strategy_weights": {"keyword": 2.0}}, actor="operator")
    effective_settings(fresh(space_a))  # miss: cached
    hit = effective_settings(fresh(space_a))  # hit
    hit["strategy_weights"]["keyword"] = 0.0
    assert effective_settings(fresh(space_a))["strategy_weights"]["keyword"] == 2.0
