"""Rows of one tenant point only at rows of the same tenant, by keys on (tenant_id, …) that the database
enforces and cascades (decision 0030): what a distributed PostgreSQL sharding on tenant_id requires, and
what lets a delete be one statement naming its tenant."""

import numpy as np
import pytest
from django.db import IntegrityError, connection, transaction

from memory.forgetting.deletion import DeletionContext, delete_memories
from memory.models import Memory, Message, PairMark, Session, Turn
from tenants import scope, settings_service, spaces
from tenants.models import SettingsChange, SpaceKey
from tests.support.recall import tell

DISTRIBUTED = [Session, Message, Memory, Turn, PairMark, SpaceKey]


def add_memory(space, text, **fields):
    return Memory.objects.create(
        tenant_id=space.tenant_id, space=space, kind="fact", content=text, embedding=np.ones(384), importance=0.5,
        **fields,
    )  # fmt: skip


def rows_of(space) -> dict[str, int]:
    with scope.tenant_scope(space.tenant_id):
        return {model.__name__: model.objects.filter(space_id=space.id).count() for model in DISTRIBUTED}


@pytest.mark.django_db
def test_erasing_a_space_takes_every_row_of_it_and_nothing_of_another(client_a, space_a, space_a2):
    tell(client_a, space_a, "I live in Leeds and I drive a Skoda Octavia.")
    tell(client_a, space_a2, "I live in York.")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        first, second = Memory.objects.filter(space=space_a)[:2]
        PairMark.objects.create(
            tenant_id=space_a.tenant_id, space=space_a, first=first, second=second, label="same", marked_by="op"
        )
    assert all(rows_of(space_a).values()) and rows_of(space_a2)["Memory"]
    before = rows_of(space_a2)
    with scope.tenant_scope(space_a.tenant_id):
        settings_service.change_space_settings(space=space_a, changes={"recall_limit": 7}, actor="test")
        spaces.erase_space(space=space_a)
        # The tenant's settings history stays, no longer pointing at the erased space.
        assert list(SettingsChange.objects.filter(setting="recall_limit").values_list("space_id", flat=True)) == [None]
    assert set(rows_of(space_a).values()) == {0}
    assert rows_of(space_a2) == before


@pytest.mark.django_db
def test_forgetting_a_row_takes_its_history_and_pair_marks(space_a):
    with scope.tenant_scope(space_a.tenant_id, space_a):
        current = add_memory(space_a, "We run five vans")
        other = add_memory(space_a, "We make furniture")
        add_memory(space_a, "We run four vans", superseded_by=current, superseded_reason="update")
        PairMark.objects.create(
            tenant_id=space_a.tenant_id, space=space_a, first=current, second=other, label="same", marked_by="op"
        )
        context = DeletionContext(cause="api_key", actor="test")
        delete_memories(space=space_a, memories=[current], context=context)
        assert [m.content for m in Memory.objects.filter(space=space_a)] == ["We make furniture"]
        assert not PairMark.objects.filter(space=space_a).exists()


@pytest.mark.django_db
def test_a_row_cannot_point_at_another_tenants_space(space_a, space_b):
    """Row-level security checks the row's own tenant; the key checks what it points at."""
    with scope.tenant_scope(space_b.tenant_id), pytest.raises(IntegrityError), transaction.atomic():
        Session.objects.create(tenant_id=space_b.tenant_id, space_id=space_a.id, external_id="borrowed")
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the keys are checked at commit otherwise
