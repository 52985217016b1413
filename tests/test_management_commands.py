"""The management commands an operator uses to set a tenant up."""

import pytest
from django.core.management import CommandError, call_command

from tenants import scope
from tenants.models import ApiKey, Membership
from tenants.tenant_admin import tenant_by_slug
from tests.conftest import api_client

pytestmark = pytest.mark.django_db


def test_create_tenant_then_a_key_that_works_and_is_printed_once(capsys):
    call_command("create_tenant", "Acme Freight", "--slug", "acme")
    assert "Created tenant acme" in capsys.readouterr().out
    call_command("create_api_key", "acme", "--name", "bot", "--scope", "turns")
    output = capsys.readouterr().out
    secret = output.strip().splitlines()[-1]
    assert secret.startswith("eng_")
    assert api_client(secret).get("/api/v1/spaces").status_code == 200
    tenant = tenant_by_slug("acme")
    with scope.tenant_scope(tenant):
        assert ApiKey.objects.get().scopes == ["turns"]


def test_a_duplicate_tenant_slug_is_refused(tenant_a):
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_tenant", "Another", "--slug", tenant_a.slug)


def test_create_operator_gives_a_role(tenant_a, django_user_model, capsys):
    call_command("create_operator", tenant_a.slug, "olga", "--password", "a-long-password", "--role", "support")
    assert "olga is support of alice" in capsys.readouterr().out
    user = django_user_model.objects.get(username="olga")
    assert user.check_password("a-long-password")
    with scope.tenant_scope(tenant_a):
        assert Membership.objects.get(user=user).role == "support"


def test_commands_name_an_unknown_tenant():
    with pytest.raises(CommandError, match="No tenant"):
        call_command("create_api_key", "nobody")


def test_development_mode_without_a_secret_key_gets_a_generated_one():
    """`make run` sets only ENGRAM_DEBUG=1: the settings must come with a usable SECRET_KEY."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("ENGRAM_SECRET_KEY", "ENGRAM_TESTING")}
    env.update(ENGRAM_DEBUG="1", DJANGO_SETTINGS_MODULE="config.settings")
    script = "import django; django.setup(); from django.conf import settings; print(len(settings.SECRET_KEY))"
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert int(result.stdout.strip().splitlines()[-1]) >= 40
