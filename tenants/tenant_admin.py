"""Creating tenants and operators, and finding a tenant by slug, for management commands."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import transaction
from django.utils.text import slugify

from tenants import scope
from tenants.models import Membership, Tenant


def tenant_by_slug(slug: str) -> Tenant:
    with scope.maintenance_scope():
        tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None:
        raise ObjectDoesNotExist(f"No tenant with slug {slug!r}.")
    return tenant


def all_tenant_ids() -> list:
    with scope.maintenance_scope():
        return list(Tenant.objects.order_by("created_at").values_list("id", flat=True))


@transaction.atomic
def create_tenant(*, name: str, slug: str = "") -> Tenant:
    slug = slug or slugify(name)
    if not slug:
        raise ValidationError({"slug": ["A tenant needs a slug of letters, digits or hyphens."]})
    with scope.maintenance_scope():
        if Tenant.objects.filter(slug=slug).exists():
            raise ValidationError({"slug": [f"A tenant with slug {slug!r} already exists."]})
    tenant = Tenant(name=name, slug=slug)
    # The new row must be inside the scope it is written in (the policy's WITH CHECK).
    with scope.tenant_scope(tenant.id):
        tenant.save(force_insert=True)
    return tenant


@transaction.atomic
def create_operator(
    *, tenant: Tenant, username: str, password: str, role: str = Membership.Role.OPERATOR
) -> Membership:
    if role not in Membership.Role.values:
        raise ValidationError({"role": [f"Choose from {', '.join(Membership.Role.values)}."]})
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created or password:
        user.set_password(password)
        user.save()
    with scope.tenant_scope(tenant):
        membership, _ = Membership.objects.update_or_create(tenant=tenant, user=user, defaults={"role": role})
    return membership
