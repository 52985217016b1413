"""After an erasure, retiring the key-encryption key version the erased space was wrapped under
makes its residue (a wrapped key and ciphertext left in table pages, WAL or backups) unreadable,
while every live space keeps reading; the erasure answer names that version."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from memory.models import Memory
from tenants import keyring, scope
from tenants.encrypted_fields import associated_data, open_sealed
from tenants.keyring import UnknownKeyId
from tenants.models import SpaceKey
from tenants.space_keys import data_key_cache, unwrap

pytestmark = pytest.mark.django_db
SECRET = "Our warehouse code is Zephyr-42."


def remember(client, space, text):
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    assert client.post(url, {"message": text}, format="json").status_code == 201


def residue_of(space):
    """What an erasure leaves behind in the database files: the wrapped key and the ciphertext."""
    from django.db import connection

    with scope.tenant_scope(space.tenant_id, space):
        key = SpaceKey.objects.get(space=space)
        memory = Memory.objects.filter(space=space, kind="fact").first()
        with connection.cursor() as cursor:
            cursor.execute("SELECT content FROM memory_memory WHERE id = %s", [memory.id])
            ciphertext = bytes(cursor.fetchone()[0])
    return {"space_id": space.id, "kek_id": key.kek_id, "kek_version": key.kek_version,
            "wrapped": bytes(key.wrapped_key), "ciphertext": ciphertext, "row_id": memory.id}  # fmt: skip


def read_residue(residue) -> str:
    data_key = unwrap(residue["wrapped"], space_id=residue["space_id"], kek_id=residue["kek_id"],
                      kek_version=residue["kek_version"])  # fmt: skip
    aad = associated_data(table="memory_memory", field="content", space_id=residue["space_id"],
                          row_id=residue["row_id"])  # fmt: skip
    return open_sealed(residue["ciphertext"], key=data_key, aad=aad)


def test_the_erasure_answer_names_the_key_version_its_residue_waits_for(client_a, space_a):
    remember(client_a, space_a, SECRET)
    response = client_a.delete(reverse("space-detail", args=[space_a.external_id]))
    assert response.status_code == 204
    assert response["Engram-Erasure-Residue"] == "until default@1 is retired"


def test_retiring_the_old_kek_makes_an_erased_spaces_residue_unreadable(settings, client_a, space_a, space_a2,
                                                                        space_b, capsys):  # fmt: skip
    remember(client_a, space_a, SECRET)
    remember(client_a, space_a2, "We run four delivery vans out of our Brno depot.")
    residue = residue_of(space_a)
    assert SECRET in read_residue(residue)  # the threat is real: with the keyring, residue reads
    client_a.delete(reverse("space-detail", args=[space_a.external_id]))

    with pytest.raises(CommandError, match="newer than 1"):
        call_command("retire_master_key", "default@1")
    settings.ENGRAM_MASTER_KEY = settings.ENGRAM_MASTER_KEY + "," + keyring.generate_entry("default", 2)
    call_command("retire_master_key", "default@1", "--dry-run")
    assert "2 live space key(s)" in capsys.readouterr().out  # space_a2 and Bob's space
    call_command("retire_master_key", "default@1")
    out = capsys.readouterr().out
    assert "re-wrapped 2/2" in out and "remove it from the keyring" in out

    # The old version is destroyed: live spaces still read, the erased space's residue does not.
    settings.ENGRAM_MASTER_KEY = ",".join(e for e in settings.ENGRAM_MASTER_KEY.split(",") if "@2" in e)
    data_key_cache.clear()
    for space in (space_a2, space_b):
        with scope.tenant_scope(space.tenant_id, space):
            assert SpaceKey.objects.get(space=space).kek_version == 2
    with scope.tenant_scope(space_a2.tenant_id, space_a2):
        assert "Brno" in " ".join(m.content for m in Memory.objects.filter(space=space_a2))
    with pytest.raises(UnknownKeyId):
        read_residue(residue)
    # A new space's erasure now points at the new version.
    remember(client_a, space_a2, "Invoices go to billing@alice.example.")
    answer = client_a.delete(reverse("space-detail", args=[space_a2.external_id]))
    assert answer["Engram-Erasure-Residue"] == "until default@2 is retired"


@pytest.mark.parametrize("bad", ["default@x", "default@", "no spaces@1", "", "default@1@2", "default@²", "default@-1"])
def test_a_malformed_key_version_is_a_clear_error(bad):
    with pytest.raises(CommandError, match="key-id@version"):
        call_command("retire_master_key", bad)
