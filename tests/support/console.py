"""A console user with a role in a tenant, logged into Django's test client."""

from __future__ import annotations

from tenants.tenant_admin import create_operator

PASSWORD = "a-long-password"


def login(client, tenant, role, username=None):
    membership = create_operator(tenant=tenant, username=username or role, password=PASSWORD, role=role)
    client.force_login(membership.user)
    return membership
