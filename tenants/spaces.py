"""Creating, finding, updating and erasing spaces."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404

from core.errors import Conflict
from tenants import settings_service, space_settings
from tenants.keyring import get_keyring
from tenants.models import SettingsChange, Space, Tenant, external_id_validator
from tenants.space_keys import create_space_key, data_key_cache


def find_space(*, tenant: Tenant | object, external_id: str) -> Space:
    """The tenant's space with this external id, or Http404. Always filtered by tenant, also under RLS."""
    tenant_id = getattr(tenant, "pk", tenant)
    space = Space.objects.select_related("tenant").filter(tenant_id=tenant_id, external_id=external_id).first()
    if space is None:
        raise Http404("No such space.")
    return space


@transaction.atomic
def create_space(
    *,
    tenant: Tenant,
    external_id: str,
    kind: str = Space.Kind.END_USER,
    display_name: str = "",
    settings: dict | None = None,
    key_id: str | None = None,
) -> Space:
    external_id_validator(external_id)
    if kind not in Space.Kind.values:
        raise ValidationError({"kind": [f"Choose from {', '.join(Space.Kind.values)}."]})
    keyring = get_keyring()
    key_id = key_id or keyring.default_key_id
    if not keyring.has(key_id):
        raise ValidationError({"key_id": [f"Key id {key_id!r} is not configured on this server."]})
    if Space.objects.filter(tenant=tenant, external_id=external_id).exists():
        raise Conflict("A space with this external id already exists.", details={"external_id": external_id})
    space = Space.objects.create(
        tenant=tenant,
        external_id=external_id,
        kind=kind,
        display_name=display_name,
        settings=space_settings.clean_overrides(settings or {}),
        key_id=key_id,
    )
    create_space_key(space)
    return space


@transaction.atomic
def update_space(
    *, space: Space, display_name: str | None = None, settings: dict | None = None, actor: str = ""
) -> Space:
    """Change the display name and/or the settings overrides (tenants.settings_service: a value sets an
    override, ``null`` drops it; every setting whose effective value changes is recorded)."""
    if settings is not None:
        settings_service.change_space_settings(space=space, changes=settings, actor=actor or "api")
    if display_name is not None:
        space.display_name = display_name
        space.save(update_fields=["display_name"])
    return space


@transaction.atomic
def erase_space(*, space: Space) -> None:
    """Delete the space, every row that belongs to it and its data key, in one transaction."""
    space_id = space.id
    # The settings history is the tenant's and stays, no longer pointing at the space (decision 0030: the key
    # does not set NULL by itself). Then one statement naming the tenant; every row of the space goes with it
    # by the database's cascading keys.
    SettingsChange.objects.filter(tenant_id=space.tenant_id, space_id=space_id).update(space=None)
    Space.objects.filter(tenant_id=space.tenant_id, pk=space_id).delete()
    transaction.on_commit(lambda: data_key_cache.forget(space_id))
    data_key_cache.forget(space_id)
