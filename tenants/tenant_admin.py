"""Creating tenants and console accounts, and finding a tenant by slug.

Usernames are global (one ``auth_user`` table), so a tenant admin adding a member must never reach
an account that already exists: ``add_member`` only ever creates a new account, and refuses a
taken name with one message that says nothing about where the name is used.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import IntegrityError, transaction
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


MIN_PASSWORD_LENGTH = 10
USERNAME_TAKEN = "This username is taken; choose another."


@transaction.atomic
def add_member(*, tenant: Tenant, username: str, password: str, role: str) -> Membership:
    """A tenant admin creates a new console account with a role in their own tenant.

    An existing account is never changed or joined to this tenant: a name used in this tenant, in
    another one or by no tenant at all gets the same ``USERNAME_TAKEN`` refusal (the name space is
    global, so "taken" is unavoidable; where, by whom and with what role is not said). The password
    is hashed before the name is tried, so a refusal takes as long as a creation.
    """
    if role not in Membership.Role.values:
        raise ValidationError({"role": [f"Choose from {', '.join(Membership.Role.values)}."]})
    username = username.strip()
    if not username or len(username) > 150:
        raise ValidationError({"username": ["Give a username of at most 150 characters."]})
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise ValidationError({"username": ["Use letters, digits and @ . + - _ only."]}) from None
    if len(password) < MIN_PASSWORD_LENGTH or "\x00" in password:
        raise ValidationError({"password": [f"Give a password of at least {MIN_PASSWORD_LENGTH} characters."]})
    user = get_user_model()(username=username, password=make_password(password))
    try:
        # The unique username decides, so two admins racing for one name cannot both get it;
        # an existing row is never selected, let alone updated.
        with transaction.atomic():
            user.save(force_insert=True)
    except IntegrityError:
        raise ValidationError({"username": [USERNAME_TAKEN]}) from None
    with scope.tenant_scope(tenant):
        return Membership.objects.create(tenant=tenant, user=user, role=role)


@transaction.atomic
def create_operator(
    *, tenant: Tenant, username: str, password: str, role: str = Membership.Role.OPERATOR
) -> Membership:
    """The platform operator's command: create an account with ``password``, or give an existing
    one a role in ``tenant`` (an account may belong to several tenants; the console asks which one
    to act in). An existing account's password is never changed here (``changepassword`` does
    that). Never reachable by a tenant admin, who uses ``add_member``."""
    if role not in Membership.Role.values:
        raise ValidationError({"role": [f"Choose from {', '.join(Membership.Role.values)}."]})
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_password(password)
        user.save()
    with scope.tenant_scope(tenant):
        membership, _ = Membership.objects.update_or_create(tenant=tenant, user=user, defaults={"role": role})
    return membership
