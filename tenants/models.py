"""Tenants, their end-user and shared spaces, the spaces' wrapped data keys, API keys and memberships.

Every table here except ``Tenant`` carries ``tenant_id`` and is isolated by row-level security
(migrations call ``tenants.rls``); ``Tenant`` itself is visible only to its own scope.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.validators import RegexValidator
from django.db import models
from django.db.models.constants import LOOKUP_SEP

from tenants.input_rules import EXTERNAL_ID_PATTERN, ID_MESSAGE
from tenants.scope import scoped_tenant_id

external_id_validator = RegexValidator(EXTERNAL_ID_PATTERN, message=ID_MESSAGE, code="invalid_external_id")


def same_tenant_key(to, *, null: bool = False, field=models.ForeignKey, **options) -> models.ForeignKey:
    """A reference to another row of the same tenant. The database holds it as a key on ``(tenant_id, column)``,
    which the migrations write (decision 0030): ON DELETE CASCADE where rows go with what they point at, NO
    ACTION where the deleting code clears the reference itself (Citus refuses SET NULL on such a key). Django
    neither constrains nor cascades it. So a delete is one statement naming the tenant, cascading inside that
    tenant's rows, never the deletion collector's ``DELETE … WHERE id IN (…)``, which names no tenant and
    would reach every shard."""
    return field(to, on_delete=models.DO_NOTHING, db_constraint=False, null=null, blank=null, **options)


class TenantOwnedQuerySet(models.QuerySet):
    def select_related(self, *fields):
        """Joined tenant-owned rows name the tenant too (``session__tenant_id = …``), so a distributed
        PostgreSQL prunes the joined table's shards as well as the queried one's (decision 0030). A nullable
        relation cannot be filtered so without dropping the rows that have none: follow it with
        ``prefetch_related``, whose query names the tenant through the related model's manager."""
        queryset = super().select_related(*fields)
        tenant_id = scoped_tenant_id()
        if tenant_id is None:
            return queryset
        conditions = {}
        for path in fields:
            model, walked = self.model, []
            for name in path.split(LOOKUP_SEP):
                field = model._meta.get_field(name)
                if field.null:
                    raise TypeError(f"{model.__name__}.{name} may be empty: prefetch_related it, not select_related")
                walked.append(name)
                model = field.related_model
                if isinstance(model._default_manager, TenantOwnedManager):
                    conditions[LOOKUP_SEP.join([*walked, "tenant_id"])] = tenant_id
        return queryset.filter(**conditions)


class TenantOwnedManager(models.Manager.from_queryset(TenantOwnedQuerySet)):
    """Every query of a tenant-owned table names the scope's tenant (``tenant_id = …``), beside row-level
    security, which filters the same rows: a distributed PostgreSQL routes a statement to one shard only on
    a filter written in it, never on a policy (decision 0030). Outside a scope (maintenance, the lookups
    before the tenant is known) nothing is added."""

    def get_queryset(self):
        queryset = super().get_queryset()
        tenant_id = scoped_tenant_id()
        return queryset if tenant_id is None else queryset.filter(tenant_id=tenant_id)


class Tenant(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    # Tenant-wide defaults for the per-space settings (tenants/space_settings.py validates them).
    default_space_settings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.slug


class Space(models.Model):
    class Kind(models.TextChoices):
        END_USER = "end_user", "End user"
        SHARED = "shared", "Shared by agents"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="spaces")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.END_USER)
    external_id = models.CharField(max_length=128, validators=[external_id_validator])
    display_name = models.CharField(max_length=200, blank=True, default="")
    # Overrides of the tenant defaults; only keys that differ are stored.
    settings = models.JSONField(default=dict, blank=True)
    # The key-encryption key that wraps this space's data key. Fixed at creation.
    key_id = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TenantOwnedManager()

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too
        constraints = [models.UniqueConstraint(fields=["tenant", "external_id"], name="space_external_id_per_tenant")]
        indexes = [models.Index(fields=["tenant", "created_at"])]

    def __str__(self):
        return self.external_id


class SpaceKey(models.Model):
    """A space's 256-bit data key, stored only wrapped (AES-GCM) by a key-encryption key outside the database."""

    space = same_tenant_key(Space, field=models.OneToOneField, primary_key=True, related_name="data_key")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    kek_id = models.CharField(max_length=64)
    kek_version = models.PositiveIntegerField()
    wrapped_key = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)
    rotated_at = models.DateTimeField(null=True, blank=True)

    objects = TenantOwnedManager()

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too


class ApiKey(models.Model):
    class Scope(models.TextChoices):
        TURNS = "turns", "Turn loop (agents)"
        ADMIN = "admin", "Management"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    # The visible, non-secret part of the key ("eng_<prefix>_<secret>"); used to find the row.
    prefix = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    scopes = ArrayField(models.CharField(max_length=16, choices=Scope.choices))
    # The agent this key speaks for in shared spaces (optional).
    agent = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.name} (eng_{self.prefix}_…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Membership(models.Model):
    class Role(models.TextChoices):
        OPERATOR = "operator", "Operator"
        SUPPORT = "support", "Support"
        ADMIN = "admin", "Admin"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "user"], name="one_membership_per_tenant")]

    # What each role may do through the API with a console session (an API key has its own scopes).
    SCOPES_BY_ROLE = {"operator": {"turns"}, "support": {"audit"}, "admin": {"turns", "admin", "audit"}}

    @property
    def scopes(self) -> set[str]:
        return self.SCOPES_BY_ROLE.get(self.role, set())


class SettingsChange(models.Model):
    """Who changed which setting from what to what: tenant defaults (space empty) or one space."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    space = same_tenant_key(Space, null=True, related_name="+")
    changed_at = models.DateTimeField(auto_now_add=True)
    actor = models.CharField(max_length=200)
    setting = models.CharField(max_length=64)
    old_value = models.JSONField(null=True)
    new_value = models.JSONField(null=True)

    objects = TenantOwnedManager()

    class Meta:
        base_manager_name = "objects"  # saves, cascades and related rows name the tenant too


class ApiKeyRequestBudget(models.Model):
    """Where one API key stands against its rate limit (tenants.request_budget).

    Keyed by the key's visible prefix; it holds a time and nothing a tenant wrote, so like the cache
    table before it it carries no tenant column and no row-level security."""

    key_prefix = models.CharField(max_length=16, primary_key=True)
    # GCRA's "theoretical arrival time": the key may spend a request while this is less than one
    # period ahead of now; each request moves it forward by period / limit.
    theoretical_arrival = models.DateTimeField()
