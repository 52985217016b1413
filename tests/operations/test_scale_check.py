"""``make scale-check`` (issue #29, decision 0030): the schema's keys carry tenant_id, and the check fails on a
statement that reaches two tenants' shards."""

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from bench.scale_check import key_problems
from bench.tenant_statements import tenant_owned_tables

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def superuser_cursor(db, superuser_conninfo):
    """A superuser's transaction on the test database, rolled back: schema changes seen by nothing else."""
    with psycopg.connect(superuser_conninfo) as connection, connection.cursor() as cursor:
        yield cursor
        connection.rollback()


def test_every_key_of_a_tenant_owned_table_carries_the_tenant(superuser_cursor):
    assert key_problems(superuser_cursor, tenant_owned_tables()) == []


def test_keys_a_distributed_postgresql_would_refuse_are_named(superuser_cursor):
    superuser_cursor.execute(
        "ALTER TABLE memory_pairmark DROP CONSTRAINT pair_mark_once, "
        "ADD CONSTRAINT pair_mark_once UNIQUE (first_id, second_id);"
        "ALTER TABLE memory_turn DROP CONSTRAINT memory_turn_session_id_same_tenant, "
        "ADD CONSTRAINT memory_turn_session_mixed FOREIGN KEY (space_id, session_id) "
        "REFERENCES memory_session (tenant_id, id);"
        "ALTER TABLE memory_memory DROP CONSTRAINT memory_memory_source_session_id_same_tenant, "
        "ADD CONSTRAINT memory_memory_source_session_id_same_tenant FOREIGN KEY (tenant_id, source_session_id) "
        "REFERENCES memory_session (tenant_id, id) ON DELETE SET NULL (source_session_id);"
        "CREATE TABLE stray (tenant_id uuid, memory_id uuid, "
        "FOREIGN KEY (tenant_id, memory_id) REFERENCES memory_memory (tenant_id, id))"
    )
    problems = key_problems(superuser_cursor, tenant_owned_tables())
    assert sorted(p.split(":")[0] for p in problems) == [
        "memory_memory.memory_memory_source_session_id_same_tenant",  # Citus refuses SET NULL on such a key
        "memory_pairmark.pair_mark_once",
        "memory_turn.memory_turn_session_mixed",
        "stray.stray_tenant_id_memory_id_fkey",
    ], problems


def test_the_check_fails_on_a_statement_across_tenants_and_passes_the_rest():
    """The whole check (a throwaway database, sharded, every operation EXPLAINed), with one statement that
    reads every tenant's memories added: that one, and only that one, is reported."""
    command = ["bench.scale_check", "--with-cross-tenant-query", "--database", "engram_scale_check_test"]
    run = subprocess.run(
        [sys.executable, "-m", *command],
        env={**os.environ, "ENGRAM_DEBUG": "1", "PYTHONPATH": str(ROOT)}, cwd=ROOT, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    assert "CROSSES TENANTS (a deliberately cross-tenant query" in run.stdout
    assert "memory_memory: 8 shards" in run.stdout
    assert "| all | " in run.stdout and run.stdout.count("CROSSES TENANTS") == 1, run.stdout
    assert "PROBLEM" not in run.stdout
