"""Changing settings — a space's overrides or the tenant's defaults: the one path the API PATCH and the
console save both take, validated, row-locked and audited.

What a change means, on both paths: ``changes`` maps a setting to its new value, or to ``None``.
A value is stored even when it equals what the space would inherit: an operator who sets a value pins
it, so a later change of the tenant default (or of the built-in one) does not move this space. ``None``
drops the override, and the space inherits again (the console's "Reset to default"). Settings not
named are left as they are. The console sends only the fields the operator changed, so saving a form
never pins the settings nobody touched.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from tenants import space_settings
from tenants.models import SettingsChange, Space, Tenant


def validated_changes(changes) -> tuple[dict, set[str]]:
    """The values to set (cleaned) and the names to drop; an unknown name or bad value is a ValidationError."""
    if not isinstance(changes, dict):
        raise ValidationError({"settings": ["Must be an object."]})
    dropped = {name for name, value in changes.items() if value is None}
    unknown = sorted(name for name in dropped if name not in space_settings.SETTINGS)
    if unknown:
        known = ", ".join(space_settings.SETTINGS)
        raise ValidationError({name: [f"Unknown setting; known settings: {known}."] for name in unknown})
    cleaned = space_settings.clean_overrides({name: value for name, value in changes.items() if value is not None})
    return cleaned, dropped


def apply_changes(layer: dict, cleaned: dict, dropped: set[str]) -> dict:
    """The new layer: ``layer`` without the dropped names, with the cleaned values set.

    >>> apply_changes({"recall_limit": 5, "hybrid": False}, {"recall_limit": 8}, {"hybrid"})
    {'recall_limit': 8}
    """
    changed = {name: value for name, value in (layer or {}).items() if name not in dropped}
    changed.update(cleaned)
    return changed


@transaction.atomic
def change_space_settings(*, space: Space, changes: dict, actor: str) -> list[SettingsChange]:
    """Apply ``changes`` to the space's overrides; every effective value that changes is recorded.

    ``space`` is updated in place (its overrides and tenant as saved), so a caller renders what is stored."""
    cleaned, dropped = validated_changes(changes)
    # The row lock comes before the read: two saves of different settings at once (an API PATCH and a
    # console save, say) would otherwise both read the same old overrides, and the later write would
    # silently undo the earlier one. Only the space row is locked; the tenant's defaults are read as they are.
    locked = (
        Space.objects.select_for_update(of=("self",))
        .select_related("tenant")
        .get(pk=space.pk, tenant_id=space.tenant_id)
    )
    before = space_settings.effective_settings(locked)
    locked.settings = apply_changes(locked.settings, cleaned, dropped)
    locked.save(update_fields=["settings"])
    space.settings, space.tenant = locked.settings, locked.tenant
    return record_changes(
        tenant_id=space.tenant_id,
        space=space,
        actor=actor,
        before=before,
        after=space_settings.effective_settings(locked),
    )


@transaction.atomic
def change_tenant_defaults(*, tenant: Tenant, changes: dict, actor: str) -> list[SettingsChange]:
    """Apply ``changes`` to the tenant's defaults (every space that does not override a setting follows them)."""
    cleaned, dropped = validated_changes(changes)
    # Locked for the same reason as a space: two admins saving different defaults must both be kept.
    locked = Tenant.objects.select_for_update().get(pk=tenant.pk)
    before = space_settings.merge_layers(locked.default_space_settings)
    locked.default_space_settings = apply_changes(locked.default_space_settings, cleaned, dropped)
    locked.save(update_fields=["default_space_settings"])
    tenant.default_space_settings = locked.default_space_settings
    after = space_settings.merge_layers(locked.default_space_settings)
    return record_changes(tenant_id=tenant.pk, space=None, actor=actor, before=before, after=after)


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
