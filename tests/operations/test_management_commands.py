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
    with pytest.raises(CommandError, match="No tenant"):
        call_command("requeue_failed_turns", "--tenant", "nobody")


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


# --- every command of the project: its help, and a real run -----------------------------------


def project_commands() -> dict[str, str]:
    from django.core.management import get_commands

    return {name: app for name, app in get_commands().items() if app in ("tenants", "memory", "mcp_server")}


# Commands whose real run needs its own kind of test: `migrate` and `flush` switch the connection to the
# owner role, which a test inside a transaction cannot do; `mcp` serves until stopped.
RUN_ELSEWHERE = {
    "migrate": "test_migrate_and_flush_run_as_the_owner",
    "flush": "test_migrate_and_flush_run_as_the_owner",
    "mcp": "tests/clients/test_mcp_server.py (stdio and streamable HTTP)",
    "run_worker": "tests/operations/test_served_processes.py (a real worker process sweeps and runs a turn)",
}


@pytest.mark.parametrize("name", sorted(project_commands()))
def test_every_command_prints_its_help(name, capsys):
    from django.core.management import ManagementUtility

    with pytest.raises(SystemExit) as exit_code:
        ManagementUtility(["manage.py", name, "--help"]).execute()
    assert exit_code.value.code == 0
    assert f"usage: manage.py {name}" in capsys.readouterr().out


def test_every_command_runs_for_real(settings, tenant_a, space_a, space_a2, client_a, tmp_path, capsys):
    settings.VAR_DIR = tmp_path
    client_a.post(f"/api/v1/spaces/{space_a.external_id}/turns?wait=true", {"message": "We run four vans."},
                  format="json")  # fmt: skip
    export_file = tmp_path / "space.jsonl"
    runs = {
        "create_tenant": (["Acme Freight", "--slug", "acme"], "Created tenant acme"),
        "create_api_key": (["acme", "--scope", "turns", "--agent", "triage"], "eng_"),
        "create_operator": (["acme", "olga", "--password", "a-long-password"], "olga is operator of acme"),
        "generate_master_key": (["--key-id", "customer-acme", "--key-version", "3"], "customer-acme@3="),
        "rotate_master_key": ([], "Done: 0 space key(s) re-wrapped"),
        "retire_master_key": (["default@1", "--dry-run"], "live space key(s) wrapped under default@1"),
        "setup_demo": ([], "Engram demo"),
        "export_space": (["--tenant", "alice", "--space", space_a.external_id, "-o", str(export_file)], ""),
        "import_space": (["--tenant", "alice", "--space", space_a2.external_id, str(export_file)], ""),
        "reembed": (["--tenant", "alice"], "Done:"),
        "sweep_turns": ([], "queued 0 due turn(s)"),
        "requeue_failed_turns": (["--tenant", "alice"], "queued 0 failed turn(s) again"),
    }
    assert set(runs) | set(RUN_ELSEWHERE) == set(project_commands()), "a new command needs a real run here"
    for name, (arguments, expected) in runs.items():
        call_command(name, *arguments)
        out = capsys.readouterr()
        assert expected in out.out + out.err, name
    with scope.tenant_scope(tenant_a, space_a2):
        from memory.models import Memory

        assert Memory.objects.filter(space=space_a2).exists()  # the import really wrote


def test_generate_master_key_refuses_a_version_below_one_or_a_bad_id():
    with pytest.raises(CommandError):
        call_command("generate_master_key", "--key-version", "0")
    with pytest.raises(CommandError):
        call_command("generate_master_key", "--key-id", "has space")


def test_create_operator_gives_an_existing_account_a_second_tenant_without_touching_its_password(
    tenant_a, tenant_b, django_user_model, capsys
):
    call_command("create_operator", tenant_a.slug, "olga", "--password", "olga-own-password")
    call_command("create_operator", tenant_b.slug, "olga", "--password", "someone-elses", "--role", "support")
    out = capsys.readouterr()
    assert "olga is support of bob" in out.out and "password was left unchanged" in out.err
    user = django_user_model.objects.get(username="olga")
    assert user.check_password("olga-own-password") and not user.check_password("someone-elses")


@pytest.mark.django_db(transaction=True)
def test_migrate_and_flush_run_as_the_owner(capsys):
    """The runtime role may neither change the schema nor TRUNCATE: both commands switch to the owner."""
    from django.core.exceptions import ObjectDoesNotExist

    call_command("migrate", "--plan")
    assert "No planned migration operations" in capsys.readouterr().out
    call_command("create_tenant", "Acme Freight", "--slug", "acme")
    assert tenant_by_slug("acme").slug == "acme"
    call_command("flush", "--no-input")
    with pytest.raises(ObjectDoesNotExist):
        tenant_by_slug("acme")
