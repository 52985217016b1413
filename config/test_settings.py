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

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests run turns explicitly (or with ?wait=true); the dummy backend records what was queued.
if os.environ.get("ENGRAM_TEST_TASKS") != "database":  # `make load` runs a real worker
    TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
# Live-server threads must close their connections after each request, or the test database
# cannot be dropped at the end of the run.
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
