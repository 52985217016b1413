"""The measure behind decision 0030 (``python -m bench.tenant_statements``) tells a statement that names its
tenant from one that leaves it to row-level security or reaches every tenant."""

import numpy as np
import pytest

from bench.tenant_statements import Planner, tenant_owned_tables, unnamed_tables
from memory.models import Memory
from tenants import scope


@pytest.fixture
def plan_of(superuser_conninfo):
    planner = Planner(superuser_conninfo)
    yield planner.plan
    planner.close()


@pytest.mark.django_db
def test_a_statement_is_read_as_naming_its_tenant_only_where_it_writes_the_tenant(space_a, plan_of):
    tables = tenant_owned_tables()
    assert {"memory_memory", "memory_turn", "tenants_space"} <= tables
    assert "tenants_apikey" not in tables  # a reference table: every node holds it whole
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Memory.objects.create(
            tenant_id=space_a.tenant_id, space=space_a, kind="fact", content="x", embedding=np.ones(384), importance=0.5
        )
        sql, params = Memory.objects.filter(space=space_a).query.sql_with_params()
        assert unnamed_tables(sql, plan_of(sql, params), tables) == ({"memory_memory"}, set())
        # Row-level security alone, and a statement across tenants: neither names one.
        sql = "SELECT count(*) FROM memory_memory WHERE space_id = %s"
        assert unnamed_tables(sql, plan_of(sql, [space_a.id]), tables) == ({"memory_memory"}, {"memory_memory"})
        sql = "SELECT m.id FROM memory_memory m JOIN memory_turn t ON t.space_id = m.space_id WHERE m.tenant_id = %s"
        touched, unnamed = unnamed_tables(sql, plan_of(sql, [space_a.tenant_id]), tables)
        assert touched == {"memory_memory", "memory_turn"}
        assert unnamed == {"memory_turn"}  # joined on the space alone: its policy filters, nothing routes
        sql = (
            "INSERT INTO memory_pairmark (space_id, first_id, second_id, label, marked_by, marked_at) "
            "VALUES (%s, %s, %s, 'same', 'operator', now())"
        )
        insert = unnamed_tables(sql, plan_of(sql, [space_a.id] * 3), tables)
        assert insert == ({"memory_pairmark"}, {"memory_pairmark"})
