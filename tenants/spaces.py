"""Creating, finding, updating and erasing spaces."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.http import Http404

from core.errors import Conflict
from database.prepared_statements import prepared
from tenants import settings_service, space_settings
from tenants.keyring import get_keyring
from tenants.models import SettingsChange, Space, Tenant, external_id_validator
from tenants.space_keys import create_space_key, data_key_cache

TENANT_COLUMN = "of_tenant__"
# The space and its tenant (whose default settings every recall reads) in one prepared statement: the ORM's
# query took ~1.3 ms of an API request, most of it building and planning SQL that never changes.
SPACE_AND_TENANT = f"""SELECT {", ".join(f"s.{f.column}" for f in Space._meta.concrete_fields)},
       {", ".join(f"t.{f.column} AS {TENANT_COLUMN}{f.column}" for f in Tenant._meta.concrete_fields)}
FROM tenants_space s JOIN tenants_tenant t ON t.id = s.tenant_id
WHERE s.tenant_id = %s AND s.external_id = %s"""


def find_space(*, tenant: Tenant | object, external_id: str) -> Space:
    """The tenant's space with this external id, or Http404. Always filtered by tenant, also under RLS."""
    tenant_id = getattr(tenant, "pk", tenant)
    found = list(Space.objects.raw(*prepared(SPACE_AND_TENANT, [tenant_id, external_id])))
    if not found:
        raise Http404("No such space.")
    space = found[0]
    fields = Tenant._meta.concrete_fields
    values = [_from_db(f, space.__dict__.pop(f"{TENANT_COLUMN}{f.column}")) for f in fields]
    space.tenant = Tenant.from_db(connection.alias, [f.attname for f in fields], values)
    return space


def _from_db(field, value):
    """A column read beside the space's, as the ORM would have converted it into the field's value."""
    convert = getattr(field, "from_db_value", None)
    return convert(value, None, connection) if convert and value is not None else value


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
