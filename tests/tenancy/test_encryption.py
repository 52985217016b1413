"""Per-space envelope encryption: nothing readable in a dump, ciphertexts bound to space and row, rotation,
and a space's data key never unwrapped under another tenant's scope."""

import base64
import subprocess

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection

from memory.models import Memory
from tenants import keyring, scope, spaces
from tenants.encrypted_fields import CiphertextMismatch
from tenants.models import SpaceKey
from tenants.space_keys import SpaceKeyUnavailable, data_key_cache, data_key_for
from tests.conftest import make_space

SENTENCES = [
    "We operate a fleet of four refrigerated vans in Brno",
    "Наше продление договора в мае",
    "私たちは毎週月曜日に配送します",
]


def add_memory(space, text, **extra):
    with scope.tenant_scope(space.tenant_id, space):
        return Memory.objects.create(
            tenant_id=space.tenant_id,
            space=space,
            kind="fact",
            content=text,
            embedding=np.ones(384),
            importance=0.5,
            **extra,
        )


def read_memory(space, memory_id):
    data_key_cache.clear()
    with scope.tenant_scope(space.tenant_id, space):
        return Memory.objects.get(pk=memory_id).content


def raw_content(memory):
    with scope.tenant_scope(memory.tenant_id), connection.cursor() as cursor:
        cursor.execute("SELECT content FROM memory_memory WHERE id = %s", [memory.id])
        return bytes(cursor.fetchone()[0])


def set_raw_content(memory, blob):
    with scope.tenant_scope(memory.tenant_id), connection.cursor() as cursor:
        cursor.execute("UPDATE memory_memory SET content = %s WHERE id = %s", [blob, memory.id])


@pytest.mark.django_db(transaction=True)
def test_a_database_dump_contains_none_of_the_stored_sentences(tenant_a, superuser_conninfo):
    from database import embedded_postgres

    space = make_space(tenant_a, "dumped")
    for sentence in SENTENCES:
        add_memory(space, sentence, topic=sentence.split()[0])
    marker = add_memory(space, "zebra-quartz-marker")
    assert read_memory(space, marker.id) == "zebra-quartz-marker"

    pg_dump = embedded_postgres.EmbeddedServer("", 0).bin("pg_dump")
    dump = subprocess.run([pg_dump, "--data-only", superuser_conninfo], check=True, capture_output=True).stdout
    assert b"memory_memory" in dump
    for fragment in [*SENTENCES, "refrigerated", "продление", "配送", "zebra-quartz-marker"]:
        assert fragment.encode() not in dump
        assert base64.b64encode(fragment.encode()) not in dump


@pytest.mark.django_db
def test_text_round_trips_through_the_encrypted_field(space_a):
    memory = add_memory(space_a, SENTENCES[1])
    assert read_memory(space_a, memory.id) == SENTENCES[1]
    blob = raw_content(memory)
    assert blob[0] == 1  # the version byte
    assert SENTENCES[1].encode() not in blob


@pytest.mark.django_db
def test_the_same_text_encrypts_differently_each_time(space_a):
    first, second = add_memory(space_a, "same words"), add_memory(space_a, "same words")
    assert raw_content(first)[1:13] != raw_content(second)[1:13]  # fresh nonces
    assert raw_content(first) != raw_content(second)


@pytest.mark.django_db
def test_a_ciphertext_moved_to_another_spaces_row_fails_to_decrypt(space_a, space_a2):
    source = add_memory(space_a, "We run four vans")
    target = add_memory(space_a2, "something else")
    set_raw_content(target, raw_content(source))
    with pytest.raises(CiphertextMismatch, match="does not belong"):
        read_memory(space_a2, target.id)


@pytest.mark.django_db
def test_a_ciphertext_moved_to_another_row_of_the_same_space_fails_to_decrypt(space_a):
    source, target = add_memory(space_a, "We run four vans"), add_memory(space_a, "other")
    set_raw_content(target, raw_content(source))
    with pytest.raises(CiphertextMismatch):
        read_memory(space_a, target.id)


@pytest.mark.django_db
def test_a_tampered_ciphertext_fails_to_decrypt(space_a):
    memory = add_memory(space_a, "We run four vans")
    blob = bytearray(raw_content(memory))
    blob[-1] ^= 1
    set_raw_content(memory, bytes(blob))
    with pytest.raises(CiphertextMismatch):
        read_memory(space_a, memory.id)


@pytest.mark.django_db
def test_plaintext_never_goes_into_sql(space_a):
    add_memory(space_a, "We run four vans")
    with pytest.raises(TypeError, match="encrypted"), scope.tenant_scope(space_a.tenant_id, space_a):
        Memory.objects.update(content="overwritten in SQL")
    with pytest.raises(TypeError, match="encrypted"), scope.tenant_scope(space_a.tenant_id, space_a):
        list(Memory.objects.filter(content="We run four vans"))


@pytest.mark.django_db
def test_another_tenant_cannot_use_a_spaces_key(space_a, space_b):
    data_key_cache.clear()
    with scope.tenant_scope(space_b.tenant_id), pytest.raises(SpaceKeyUnavailable):
        data_key_for(space_a.id)


@pytest.mark.django_db
def test_space_keys_are_stored_only_wrapped(space_a):
    data_key_cache.clear()
    with scope.tenant_scope(space_a.tenant_id):
        key = data_key_for(space_a.id)
        row = SpaceKey.objects.get(space=space_a)
    assert len(key) == 32
    assert key not in bytes(row.wrapped_key)
    assert row.kek_id == "default" and row.kek_version == 1


@pytest.mark.django_db
def test_rotate_master_key_rewraps_every_space_key_and_keeps_rows_readable(settings, tenant_a, tenant_b, capsys):
    spaces_made = [make_space(tenant_a, "r1"), make_space(tenant_a, "r2"), make_space(tenant_b, "r1")]
    acme = make_space(tenant_a, "acme", key_id="customer-acme")
    memories = [
        (space, add_memory(space, f"fact in {space.external_id} of {space.tenant_id}")) for space in spaces_made
    ]
    acme_memory = add_memory(acme, "acme's own fact")
    with scope.tenant_scope(tenant_a):
        wrapped_before = {k.space_id: bytes(k.wrapped_key) for k in SpaceKey.objects.all()}
        rows_before = {m.id: raw_content(m) for _, m in memories if m.tenant_id == tenant_a.id}

    settings.ENGRAM_MASTER_KEY = settings.ENGRAM_MASTER_KEY + "," + keyring.generate_entry("default", 2)
    call_command("rotate_master_key")
    output = capsys.readouterr().out
    assert "re-wrapped 3/3" in output
    call_command("rotate_master_key")  # re-running after completion has nothing left to do
    assert "re-wrapped 0/0" in capsys.readouterr().out

    # The old KEK version can now be dropped from the keyring: every row still reads.
    settings.ENGRAM_MASTER_KEY = ",".join(
        e for e in settings.ENGRAM_MASTER_KEY.split(",") if not e.startswith("default=")
    )
    for space, memory in memories:
        assert read_memory(space, memory.id) == f"fact in {space.external_id} of {space.tenant_id}"
    assert read_memory(acme, acme_memory.id) == "acme's own fact"
    with scope.tenant_scope(tenant_a):
        for key in SpaceKey.objects.exclude(space=acme):
            assert key.kek_version == 2 and bytes(key.wrapped_key) != wrapped_before[key.space_id]
        assert SpaceKey.objects.get(space=acme).kek_version == 1
        for memory_id, blob in rows_before.items():
            assert raw_content(Memory.objects.get(id=memory_id)) == blob  # rows untouched


@pytest.mark.django_db
def test_a_partially_rotated_keyring_resumes_where_it_stopped(settings, tenant_a):
    made = [make_space(tenant_a, f"p{i}") for i in range(3)]
    settings.ENGRAM_MASTER_KEY = settings.ENGRAM_MASTER_KEY + "," + keyring.generate_entry("default", 2)
    from tenants.space_keys import rewrap_to_newest

    with scope.tenant_scope(tenant_a):
        rewrap_to_newest(SpaceKey.objects.get(space=made[0]))  # an interrupted run got this far
    from tenants.key_rotation import count_outdated, rotate_all

    assert count_outdated() == 2
    assert rotate_all() == 2
    assert count_outdated() == 0


@pytest.mark.django_db
def test_erasing_a_space_deletes_its_key_and_rows(space_a, space_a2):
    add_memory(space_a, "We run four vans")
    kept = add_memory(space_a2, "kept")
    with scope.tenant_scope(space_a.tenant_id):
        spaces.erase_space(space=space_a)
        assert not SpaceKey.objects.filter(space_id=space_a.id).exists()
        assert not Memory.objects.filter(space_id=space_a.id).exists()
        with pytest.raises(SpaceKeyUnavailable):
            data_key_for(space_a.id)
    assert read_memory(space_a2, kept.id) == "kept"


def test_the_unwrapped_key_cache_is_bounded():
    import uuid

    from tenants.space_keys import DataKeyCache

    cache = DataKeyCache(max_entries=3, ttl_seconds=60)
    ids = [uuid.uuid4() for _ in range(5)]
    for space_id in ids:
        cache.put(space_id, b"k" * 32)
    assert len(cache) == 3
    assert cache.get(ids[0]) is None and cache.get(ids[4]) == b"k" * 32
    expiring = DataKeyCache(max_entries=3, ttl_seconds=-1)
    expiring.put(ids[0], b"k" * 32)
    assert expiring.get(ids[0]) is None


def test_the_keyring_refuses_bad_configuration():
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="32 bytes"):
        keyring.Keyring.parse("default=" + base64.b64encode(b"short").decode())
    with pytest.raises(ImproperlyConfigured, match="base64"):
        keyring.Keyring.parse("default=not base64!")
    with pytest.raises(ImproperlyConfigured, match="not in the keyring"):
        keyring.Keyring.parse(keyring.generate_entry("a"), default_key_id="b")
    ring = keyring.Keyring.parse(keyring.generate_entry("a") + "\n" + keyring.generate_entry("a", 3))
    assert ring.newest("a")[0] == 3


@pytest.mark.django_db
def test_data_key_for_refuses_another_tenants_space_when_not_cached(space_a, space_b):
    data_key_cache.clear()
    with scope.tenant_scope(space_b.tenant_id, space_b), pytest.raises(SpaceKeyUnavailable):
        data_key_for(space_a.id)
