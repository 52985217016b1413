"""A sealed import's key-derivation cost is the server's: a header naming any other scrypt
parameters is a 400 before a key is derived, and running out of memory is never a 500."""

from __future__ import annotations

import base64
import json

import pytest

from memory.models import Memory
from memory.transfer import sealing
from tenants import scope

pytestmark = pytest.mark.django_db

GOOD_SALT = base64.b64encode(b"s" * 16).decode()


def sealed_file(**encryption) -> bytes:
    header = {
        "format": sealing.FORMAT, "version": sealing.VERSION, "export_id": "x",
        "source": {"kind": "end_user"},
        "encryption": {"cipher": "AES-256-GCM", "kdf": "scrypt", "salt": GOOD_SALT, **sealing.SCRYPT,
                       **encryption},
    }  # fmt: skip
    return (json.dumps(header) + "\n" + json.dumps({"sealed": "AAAA"}) + "\n").encode()


def post_import(client, body):
    return client.generic(
        "POST", "/api/v1/spaces/customer-1/import", body, content_type="application/x-ndjson",
        HTTP_X_ENGRAM_PASSPHRASE="any passphrase",
    )  # fmt: skip


@pytest.fixture
def derivations(monkeypatch):
    """Every key derivation the server starts (the real one still runs)."""
    calls = []
    real = sealing.derive_key

    def counting(passphrase, salt, parameters=sealing.SCRYPT):
        calls.append(parameters)
        return real(passphrase, salt, parameters)

    monkeypatch.setattr(sealing, "derive_key", counting)
    return calls


HOSTILE_HEADERS = [
    {"n": 2**40}, {"n": 2**20}, {"n": 2**14}, {"n": 2**15 + 1}, {"n": -(2**15)}, {"n": 0},
    {"r": 2**30}, {"r": 1024}, {"r": -8}, {"r": 0}, {"p": 2**20}, {"p": 64}, {"p": -1}, {"p": 0},
    {"n": "32768"}, {"n": 32768.0}, {"r": 8.0}, {"p": True}, {"n": None}, {"n": [32768]}, {"n": {"$gt": 1}},
    {"n": 10**400}, {"r": "8; DROP TABLE"}, {"salt": ""}, {"salt": "!!!"}, {"salt": "A" * 10_000},
    {"salt": None}, {"salt": base64.b64encode(b"s" * 15).decode()}, {"kdf": "argon2"}, {"kdf": None},
    {"cipher": "ROT13"},
]  # fmt: skip


@pytest.mark.parametrize("hostile", HOSTILE_HEADERS, ids=lambda h: json.dumps(h)[:40])
def test_a_hostile_key_derivation_header_is_a_400_before_any_work(client_a, space_a, derivations, hostile):
    response = post_import(client_a, sealed_file(**hostile))
    assert response.status_code == 400, response.content[:200]
    assert response.json()["error"]["details"]["non_field_errors"][0].startswith("Line 1:")
    assert derivations == []
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert not Memory.objects.filter(space=space_a).exists()


@pytest.mark.parametrize("encryption", ["yes", 1, ["scrypt"]])
def test_an_encryption_field_that_is_not_an_object_is_a_400(client_a, space_a, derivations, encryption):
    header = json.loads(sealed_file().splitlines()[0])
    body = (json.dumps({**header, "encryption": encryption}) + "\n").encode()
    assert post_import(client_a, body).status_code == 400 and derivations == []


def test_the_servers_own_parameters_are_derived_once(client_a, space_a, derivations):
    response = post_import(client_a, sealed_file())
    assert response.status_code == 400 and "cannot be decrypted" in str(response.json())
    assert derivations == [sealing.SCRYPT]


def test_running_out_of_memory_while_deriving_is_a_503_not_a_500(client_a, space_a, monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(sealing, "derive_key", exhausted)
    response = post_import(client_a, sealed_file())
    assert response.status_code == 503 and response.json()["error"]["code"] == "temporarily_unavailable"


def test_a_hostile_header_is_refused_even_without_a_passphrase(client_a, space_a, derivations):
    body = sealed_file(n=2**40)
    response = client_a.generic("POST", "/api/v1/spaces/customer-1/import", body, content_type="application/x-ndjson")
    assert response.status_code == 400 and "key-derivation" in str(response.json()) and derivations == []
