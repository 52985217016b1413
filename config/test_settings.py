"""Settings for the test suite: the real settings with fixed test secrets and a two-key test keyring."""

import os

os.environ.setdefault("ENGRAM_TESTING", "1")

os.environ.setdefault("ENGRAM_SECRET_KEY", "test-only-secret-key-not-for-production-0123456789")
# Two key-encryption keys, so tests can create spaces under a customer-managed key id.
os.environ.setdefault(
    "ENGRAM_MASTER_KEY",
    "default=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=,customer-acme=ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=",
)
os.environ.setdefault("ENGRAM_DEFAULT_KEY_ID", "default")
# Tests release a dozen threads at once, some holding their connection while they wait for a lock
# another holds: a production-sized pool would time them out. The ceiling itself is tested with a
# small pool (tests/operations/test_database_connections.py).
os.environ.setdefault("ENGRAM_DB_CONNECTIONS", "32")

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests run turns explicitly (or with ?wait=true); the dummy backend records what was queued.
if os.environ.get("ENGRAM_TEST_TASKS") != "database":  # `make load` runs a real worker
    TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
