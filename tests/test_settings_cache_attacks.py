"""Review attacks on the effective-settings cache (tenants/space_settings.py) and tenants/settings_service.py."""

import pytest

from tenants import scope
from tenants.models import Space
from tenants.settings_service import change_space_settings, change_tenant_defaults
from tenants.space_settings import SETTINGS, effective_settings

pytestmark = pytest.mark.django_db


def fresh(space):
    with scope.tenant_scope(space.tenant_id, space):
        return Space.objects.select_related("tenant").get(pk=space.pk)


def test_saved_value_is_seen_at_once_not_the_cached_one(space_a):
    assert effective_settings(fresh(space_a))["recall_limit"] != 7
    with scope.tenant_scope(space_a.tenant_id, space_a):
        change_space_settings(space=fresh(space_a), changes={"recall_limit": 7}, actor="review")
    assert effective_settings(fresh(space_a))["recall_limit"] == 7
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Space.objects.filter(pk=space_a.pk).update(settings={})  # a bare UPDATE, no invalidation
    assert effective_settings(fresh(space_a))["recall_limit"] != 7


def test_tenant_default_change_reaches_the_space(space_a, tenant_a):
    effective_settings(fresh(space_a))
    with scope.tenant_scope(tenant_a):
        change_tenant_defaults(tenant=tenant_a, changes={"recall_limit": 9}, actor="review")
    assert effective_settings(fresh(space_a))["recall_limit"] == 9


def test_another_tenants_settings_never_served(space_a, space_b):
    with scope.tenant_scope(space_a.tenant_id, space_a):
        change_space_settings(space=fresh(space_a), changes={"recall_limit": 3}, actor="review")
    effective_settings(fresh(space_a))
    assert effective_settings(fresh(space_b))["recall_limit"] != 3


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


def test_cache_hit_copy_is_deep_enough(space_a):
    with scope.tenant_scope(space_a.tenant_id, space_a):
        change_space_settings(space=fresh(space_a), changes={"strategy_weights": {"keyword": 2.0}}, actor="review")
    effective_settings(fresh(space_a))  # miss: cached
    hit = effective_settings(fresh(space_a))  # hit
    hit["strategy_weights"]["keyword"] = 0.0
    assert effective_settings(fresh(space_a))["strategy_weights"]["keyword"] == 2.0
