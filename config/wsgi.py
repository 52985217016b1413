import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Refuse to serve when the database role would bypass row-level security (see tenants/checks.py).
from tenants.checks import database_role_problem  # noqa: E402

_problem = database_role_problem()
if _problem:
    raise RuntimeError(_problem)

from memory.warmup import warm_up  # noqa: E402

# gunicorn --preload imports this module once in its master and forks the workers from it
# (config/gunicorn.py): load what they share, but do not run the model here (memory/warmup.py).
_PRELOADED = os.environ.get("ENGRAM_PRELOADED_BY_GUNICORN") == "1"
warm_up(run_model=not _PRELOADED)

# The accepted query parameters come from the OpenAPI schema; build it now, not on a first request.
from api.query_parameters import documented_parameters  # noqa: E402

documented_parameters()

# A connection opened here would be inherited by every forked worker: one socket, several users; and
# a pool's threads do not survive a fork. Each worker opens its own pools on first use.
from django.db import connections  # noqa: E402

from database.roles import close_with_pools  # noqa: E402

for _connection in connections.all(initialized_only=True):
    close_with_pools(_connection)
