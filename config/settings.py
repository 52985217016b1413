"""Engram settings, driven by the environment (see the configuration table in README.md)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.cpu_quota import usable_cores
from database.url import database_settings_from_url

# One compute thread for numpy, and one for the embedding model unless the machine's cores are free
# (memory/text/compute_threads.py decides per call; these are read when the libraries load, so they
# are set before either does). A waiting OpenMP thread spins for GOMP_SPINCOUNT iterations before it
# sleeps: libgomp's default (300,000) burns the core another process needs under load (one embedding's
# p95 was 170 ms beside two busy processes; 31 ms with 20,000, and the same 9.5 ms on an idle machine).
# OMP_WAIT_POLICY=ACTIVE keeps that spin when a process holds more OpenMP pool threads than there are
# cores — libgomp keeps a pool per thread that embeds (a gunicorn worker's request threads), and
# otherwise cuts the spin to 100 iterations, sleeping at every barrier: two threads then took ~30 ms an
# embedding instead of ~11. With GOMP_SPINCOUNT bounded an idle process still sleeps (decision 0019).
for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")
os.environ.setdefault("GOMP_SPINCOUNT", "20000")
os.environ.setdefault("OMP_WAIT_POLICY", "ACTIVE")

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("ENGRAM_VAR_DIR", BASE_DIR / "var"))


def env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


DEBUG = env_flag("ENGRAM_DEBUG")


def _embedding_threads(text: str) -> int:
    if not text.strip():
        return usable_cores()
    try:
        threads = int(text)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ImproperlyConfigured(f"ENGRAM_EMBEDDING_THREADS must be a whole number of at least 1, not {text!r}")
    return threads


def _development_file(name: str, make_content) -> Path:
    """A file under var/ that development creates once (a secret key, a master key) and then reuses."""
    path = VAR_DIR / name
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(make_content())
        path.chmod(0o600)
    return path


SECRET_KEY = os.environ.get("ENGRAM_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("ENGRAM_SECRET_KEY must be set when ENGRAM_DEBUG is off.")
    SECRET_KEY = _development_file("dev-secret-key", lambda: secrets.token_urlsafe(50)).read_text().strip()
elif not DEBUG and not os.environ.get("ENGRAM_TESTING") and (len(SECRET_KEY) < 40 or "test" in SECRET_KEY.lower()):
    raise ImproperlyConfigured("ENGRAM_SECRET_KEY looks like a default or test value; use 40+ random characters.")

# The keyring of key-encryption keys (see tenants/keyring.py). Never stored in the database.
ENGRAM_MASTER_KEY = os.environ.get("ENGRAM_MASTER_KEY", "")
ENGRAM_MASTER_KEY_FILE = os.environ.get("ENGRAM_MASTER_KEY_FILE", "")
ENGRAM_DEV_MASTER_KEY_FILE = VAR_DIR / "dev-master.key"
if not ENGRAM_MASTER_KEY and not ENGRAM_MASTER_KEY_FILE:
    if not DEBUG:
        raise ImproperlyConfigured(
            "No key-encryption key configured: set ENGRAM_MASTER_KEY or ENGRAM_MASTER_KEY_FILE "
            "(see docs/operations.md). Only development (ENGRAM_DEBUG=1) generates one under var/."
        )
    ENGRAM_MASTER_KEY_FILE = str(ENGRAM_DEV_MASTER_KEY_FILE)
ENGRAM_DEFAULT_KEY_ID = os.environ.get("ENGRAM_DEFAULT_KEY_ID", "")

ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ENGRAM_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("ENGRAM_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "django_tasks",
    "django_tasks_db",
    "tenants",
    "memory",
    "api",
    "console",
    "mcp_server",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.security_headers.ContentSecurityPolicyMiddleware",
    "api.request_tracing.RequestSpanMiddleware",
    "config.request_limits.RequestBodyLimitMiddleware",
    "api.query_parameters.UnknownQueryParametersMiddleware",
    "config.scope_reset.ResetScopeMiddleware",
    "config.database_unavailable.DatabaseUnavailableMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"

# Shared by every server process: per-key rate limits and the console's failed-login counts must
# hold across gunicorn workers (a per-process memory cache would multiply the limits).
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "engram_cache",
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    }
}
CSRF_FAILURE_VIEW = "api.error_pages.csrf_failure"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# The runtime role (DATABASE_URL) reads and writes rows; the owner (the migration URL) owns the schema
# and runs migrate/flush (database/roles.py). Both name the same database.
DATABASE_URL = os.environ.get("DATABASE_URL", "")
ENGRAM_MIGRATION_DATABASE_URL = os.environ.get("ENGRAM_MIGRATION_DATABASE_URL", "")
if DATABASE_URL:
    _database = database_settings_from_url(DATABASE_URL)
    _owner = database_settings_from_url(ENGRAM_MIGRATION_DATABASE_URL) if ENGRAM_MIGRATION_DATABASE_URL else None
    if _owner and _owner["NAME"] != _database["NAME"]:
        raise ImproperlyConfigured("ENGRAM_MIGRATION_DATABASE_URL must name the same database as DATABASE_URL.")
    ENGRAM_EMBEDDED_DATABASE = False
else:
    from database import embedded_postgres

    _server = embedded_postgres.ensure_running()
    _database = {
        "ENGINE": "django.db.backends.postgresql",
        # Another database on the embedded server (the benchmarks serve their throw-away one).
        "NAME": os.environ.get("ENGRAM_DATABASE_NAME", embedded_postgres.APP_DATABASE),
        "USER": embedded_postgres.APP_ROLE,
        "PASSWORD": "",
        "HOST": _server.socket_dir,
        "PORT": str(_server.port),
        "OPTIONS": {},
    }
    _owner = {**_database, "USER": embedded_postgres.OWNER_ROLE}
    ENGRAM_EMBEDDED_DATABASE = True
# PostgreSQL, with the test database created and dropped as the owner.
_database["ENGINE"] = "database.postgres_backend"
ENGRAM_RUNTIME_DATABASE_ROLE = _database["USER"]
ENGRAM_DATABASE_OWNER = (
    {key: _owner[key] for key in ("USER", "PASSWORD", "HOST", "PORT", "OPTIONS")} if _owner else None
)
# Every request runs in one transaction: the row-level-security scope is set inside it with
# SET LOCAL, so it can never outlive the request on a pooled connection.
_database["ATOMIC_REQUESTS"] = True
# Each process holds at most ENGRAM_DB_CONNECTIONS connections, whatever its threads do: Django's
# psycopg pool for requests and tasks, and a small pool beside it for the rate limit's autocommit
# statement (database/postgres_backend). A thread that finds none free waits ENGRAM_DB_POOL_TIMEOUT
# seconds, then its request is a 503 with Retry-After (config/database_unavailable.py) — persistent
# per-thread connections grew with every thread runserver started and ran the server out of slots.
ENGRAM_DB_CONNECTIONS = int(os.environ.get("ENGRAM_DB_CONNECTIONS", "6"))
if ENGRAM_DB_CONNECTIONS < 2:
    raise ImproperlyConfigured("ENGRAM_DB_CONNECTIONS must be at least 2 (one for requests, one for the rate limit).")
ENGRAM_DB_POOL_TIMEOUT = float(os.environ.get("ENGRAM_DB_POOL_TIMEOUT", "3"))
# Recall's candidates, the API key's and the space's rows are prepared once per connection (decision 0033). SQL
# PREPARE lives on one server connection: behind a pooler in transaction mode, turn it off.
ENGRAM_PREPARED_STATEMENTS = env_flag("ENGRAM_PREPARED_STATEMENTS", default=True)
ENGRAM_DB_RATE_LIMIT_CONNECTIONS = 1 if ENGRAM_DB_CONNECTIONS < 6 else 2
_database["OPTIONS"] = {
    **_database["OPTIONS"],
    "pool": {
        "min_size": 1,
        "max_size": ENGRAM_DB_CONNECTIONS - ENGRAM_DB_RATE_LIMIT_CONNECTIONS,
        "timeout": ENGRAM_DB_POOL_TIMEOUT,
        # An idle connection is closed after a minute, as CONN_MAX_AGE=60 did.
        "max_idle": 60.0,
        "num_workers": 1,
    },
}
_database["CONN_MAX_AGE"] = 0  # the pool keeps them; Django refuses both at once
_database["CONN_HEALTH_CHECKS"] = True
DATABASES = {"default": _database}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # `make serve` collects into it; whitenoise serves it
# Without collectstatic (development, tests) whitenoise serves straight from the app directories.
WHITENOISE_USE_FINDERS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

LOGIN_URL = "/console/login/"
LOGIN_REDIRECT_URL = "/console/"
LOGOUT_REDIRECT_URL = "/console/login/"
SESSION_COOKIE_AGE = int(os.environ.get("ENGRAM_SESSION_SECONDS", str(8 * 3600)))
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
# OpenTelemetry: memory text and queries reach span attributes only when the operator opts in.
ENGRAM_OTEL_CAPTURE_CONTENT = env_flag("ENGRAM_OTEL_CAPTURE_CONTENT")
# Behind TLS (a proxy that terminates it and sets X-Forwarded-Proto): HSTS and secure cookies.
if env_flag("ENGRAM_BEHIND_TLS"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SECURE_HSTS_SECONDS = 31536000
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# Request bodies above this are refused with 413 (config/request_limits.py); a route may allow more.
ENGRAM_MAX_REQUEST_BYTES = 256 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 32 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["api.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["api.authentication.HasApiKeyScope"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.SafeJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.LimitOffsetPage",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "api.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_CLASSES": ["api.throttles.PerApiKeyRateThrottle"],
}
# Requests per API key, as DRF's "<count>/<second|minute|hour|day>".
ENGRAM_API_RATE_LIMIT = os.environ.get("ENGRAM_API_RATE_LIMIT", "1200/minute")

SPECTACULAR_SETTINGS = {
    "TITLE": "Engram API",
    "DESCRIPTION": "Per-customer long-term memory for AI agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # Swagger UI served from this server: nothing is loaded from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Three models have a "kind": each enum is named after its model, not after a hash of its values.
    "ENUM_NAME_OVERRIDES": {
        "MemoryKindEnum": "memory.models.Memory.Kind",
        "EpisodeKindEnum": "memory.models.Episode.Kind",
        "SpaceKindEnum": "tenants.models.Space.Kind",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api.openapi_hooks.add_error_responses",
        "api.operation_docs.describe_operations",
        "api.openapi_hooks.closed_request_bodies",
    ],
}

TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("ENGRAM_LOG_LEVEL", "INFO")},
    "loggers": {"pgserver": {"level": "WARNING"}, "httpx": {"level": "WARNING"}},
}

# Models. Extraction and forget judgement use the deterministic offline engine until a chat model
# is configured; embeddings use the bundled local model unless ENGRAM_EMBEDDING_ENGINE=openai.
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
ENGRAM_LLM_MODEL = os.environ.get("ENGRAM_LLM_MODEL", "gpt-4o-mini")
ENGRAM_EXTRACTION_ENGINE = os.environ.get(
    "ENGRAM_EXTRACTION_ENGINE", "openai" if (OPENAI_API_KEY or OPENAI_BASE_URL) else "offline"
)
ENGRAM_EMBEDDING_ENGINE = os.environ.get("ENGRAM_EMBEDDING_ENGINE", "local")
ENGRAM_EMBEDDING_BASE_URL = os.environ.get("ENGRAM_EMBEDDING_BASE_URL", OPENAI_BASE_URL)
ENGRAM_EMBEDDING_API_KEY = os.environ.get("ENGRAM_EMBEDDING_API_KEY", OPENAI_API_KEY)
ENGRAM_EMBEDDING_MODEL = os.environ.get("ENGRAM_EMBEDDING_MODEL", "multilingual-e5-small")
# The most threads one in-process embedding runs, when that many cores are free (compute_threads.py).
ENGRAM_EMBEDDING_THREADS = _embedding_threads(os.environ.get("ENGRAM_EMBEDDING_THREADS", ""))
ENGRAM_MODEL_TIMEOUT_SECONDS = float(os.environ.get("ENGRAM_MODEL_TIMEOUT_SECONDS", "30"))
ENGRAM_MODEL_MAX_RETRIES = int(os.environ.get("ENGRAM_MODEL_MAX_RETRIES", "2"))
# A turn whose model or embedding call fails is retried with exponential backoff, this many times.
ENGRAM_TURN_MAX_ATTEMPTS = int(os.environ.get("ENGRAM_TURN_MAX_ATTEMPTS", "6"))
# How many memories one turn may supersede; further updates are written beside the old values.
ENGRAM_TURN_MAX_SUPERSESSIONS = int(os.environ.get("ENGRAM_TURN_MAX_SUPERSESSIONS", "3"))
ENGRAM_TURN_RETRY_BASE_SECONDS = float(os.environ.get("ENGRAM_TURN_RETRY_BASE_SECONDS", "5"))
# The backoff's ceiling, and how long a turn waits for a chat model that is down (its retries do not count
# against ENGRAM_TURN_MAX_ATTEMPTS): past that age it is derived by the offline engine and marked so.
ENGRAM_TURN_RETRY_MAX_SECONDS = float(os.environ.get("ENGRAM_TURN_RETRY_MAX_SECONDS", "300"))
ENGRAM_MODEL_WAIT_SECONDS = float(os.environ.get("ENGRAM_MODEL_WAIT_SECONDS", "900"))

# Key of the deletion audit's content digests (base64 of 32 bytes). Without it the digests are
# keyed from SECRET_KEY, so rotating SECRET_KEY would make earlier digests unverifiable.
ENGRAM_AUDIT_KEY = os.environ.get("ENGRAM_AUDIT_KEY", "")
