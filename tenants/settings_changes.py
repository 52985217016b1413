"""Changing settings — a space's overrides or the tenant's defaults — validated and audited."""

from __future__ import annotations

from django.db import transaction

from tenants import space_settings
from tenants.models import SettingsChange, Space, Tenant


def record_changes(*, tenant_id, space, actor: str, before: dict, after: dict) -> list[SettingsChange]:
    changes = []
    for name in sorted(set(before) | set(after)):
        if before.get(name) != after.get(name):
            changes.append(
                SettingsChange.objects.create(
                    tenant_id=tenant_id, space=space, actor=actor[:200], setting=name,
                    old_value=before.get(name), new_value=after.get(name),
                )
            )  # fmt: skip
    return changes


@transaction.atomic
def change_space_settings(*, space: Space, values: dict, actor: str) -> list[SettingsChange]:
    """Set overrides (a value equal to the tenant default drops the override). Takes effect next turn."""
    cleaned = space_settings.clean_overrides(values)
    before = space_settings.effective_settings(space)
    defaults = {**space_settings.defaults(), **(space.tenant.default_space_settings or {})}
    overrides = dict(space.settings)
    for name, value in cleaned.items():
        if value == defaults.get(name):
            overrides.pop(name, None)
        else:
            overrides[name] = value
    space.settings = overrides
    space.save(update_fields=["settings"])
    return record_changes(tenant_id=space.tenant_id, space=space, actor=actor, before=before,
                   after=space_settings.effective_settings(space))  # fmt: skip


@transaction.atomic
def change_tenant_defaults(*, tenant: Tenant, values: dict, actor: str) -> list[SettingsChange]:
    cleaned = space_settings.clean_overrides(values)
    before = {**space_settings.defaults(), **(tenant.default_space_settings or {})}
    tenant.default_space_settings = {**(tenant.default_space_settings or {}), **cleaned}
    tenant.save(update_fields=["default_space_settings"])
    after = {**space_settings.defaults(), **tenant.default_space_settings}
    return record_changes(tenant_id=tenant.id, space=None, actor=actor, before=before, after=after)
