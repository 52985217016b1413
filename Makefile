# Engram: `make run` serves a demo on 127.0.0.1:8000 (PORT=…), `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell sha1sum requirements.txt | cut -c1-12)
DEV_ENV := ENGRAM_DEBUG=1
# Test processes for `make test` (pytest-xdist; each has its own test database). Two fit the CI machine's two
# cores; more than the cores slows the suite down.
TEST_WORKERS ?= 2
# Where `make run` and `make serve` listen (127.0.0.1): `make run PORT=8123 MCP_PORT=8124` when these are taken.
PORT ?= 8000
MCP_PORT ?= 8001

.PHONY: run serve test fuzz lint stop db-start db-status migrate bench bench-mem0 eval eval-long load venv scale-check

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

db-start: $(STAMP)
	$(PY) -m database.embedded_postgres start

db-status: $(STAMP)
	$(PY) -m database.embedded_postgres status

stop: $(STAMP)
	$(PY) -m database.embedded_postgres stop

migrate: db-start
	$(DEV_ENV) $(PY) manage.py migrate --no-input

run: migrate
	$(DEV_ENV) $(PY) manage.py setup_demo --port $(PORT) --mcp-port $(MCP_PORT) --check-ports
	@echo "Starting the worker and the server on http://127.0.0.1:$(PORT) (Ctrl-C stops both)."
	@$(DEV_ENV) $(PY) manage.py db_worker --queue-name '*' --no-reload & worker=$$!; \
	$(DEV_ENV) $(PY) manage.py sweep_turns --every 30 & sweeper=$$!; \
	$(DEV_ENV) $(PY) manage.py mcp --http --port $(MCP_PORT) & mcp=$$!; \
	trap "kill $$worker $$sweeper $$mcp 2>/dev/null" EXIT INT TERM; \
	$(DEV_ENV) $(PY) manage.py runserver 127.0.0.1:$(PORT) --noreload

# Production-style serving on 127.0.0.1:$(PORT) (MCP over HTTP on 127.0.0.1:$(MCP_PORT)/mcp): gunicorn (config/gunicorn.py:
# 2 workers x 4 threads forked from a preloaded master) with static files through whitenoise, and the task
# worker with the retry and retention sweep on a thread beside it. Needs ENGRAM_SECRET_KEY and a
# master key in the environment (see docs/operations.md); DEBUG stays off.
serve: db-start
	$(PY) manage.py migrate --no-input
	$(PY) manage.py collectstatic --no-input -v0
	@$(PY) manage.py run_worker --queue-name '*' --no-reload --sweep-every 30 & worker=$$!; \
	$(PY) manage.py mcp --http --port $(MCP_PORT) & mcp=$$!; \
	trap "kill $$worker $$mcp 2>/dev/null" EXIT INT TERM; \
	$(PY) -m gunicorn -c config/gunicorn.py --bind 127.0.0.1:$(PORT) config.wsgi:application --access-logfile -

# schemathesis against the OpenAPI schema, longer than the bounded pass in `make test`.
fuzz: db-start
	ENGRAM_FUZZ_EXAMPLES=$${ENGRAM_FUZZ_EXAMPLES:-100} $(PY) -m pytest fuzz -q

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	# The layer rules and no import circles (pyproject.toml [tool.importlinter]).
	$(VENV)/bin/lint-imports
	DJANGO_SETTINGS_MODULE=config.test_settings $(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest -n $(TEST_WORKERS)
	# A bounded schemathesis pass over every endpoint (`make fuzz` runs a longer one).
	ENGRAM_FUZZ_EXAMPLES=8 ENGRAM_FUZZ_DERANDOMIZE=1 $(PY) -m pytest fuzz -q -p no:cacheprovider
	$(MAKE) --no-print-directory scale-check

# Citus-ready, proved here (decision 0030): every tenant-owned table hash-partitioned by tenant_id in a throwaway
# database, one of each operation run, and every statement EXPLAINed: each must touch one tenant's shard.
scale-check: db-start
	$(DEV_ENV) $(PY) -m bench.scale_check

bench: db-start
	$(PY) -m bench.run_all

# Recall against mem0 on the same workload (installs mem0 into var/mem0-venv on first use): writes the
# "Recall against mem0" section of docs/benchmarks.md. `$(PY) -m bench.mem0_compare --small` is a quick smoke run.
bench-mem0: db-start
	$(PY) -m bench.mem0_compare

# Five minutes of locust against gunicorn + worker on loopback: writes the "Load" section of docs/benchmarks.md.
load: db-start
	$(PY) -m bench.load

# Memory quality on the labelled set in eval/data: writes docs/quality.md and docs/quality/*.svg, then the
# learned sentence decisions on their held-out sets, unrelated questions per language, and what survives of the real conversations in
# ../shared/data/locomo-dev (skipped with a message where it is absent).
eval: db-start
	$(PY) -m eval.run_eval
	$(PY) -m eval.understanding score
	$(PY) -m eval.grounding
	$(PY) -m eval.reported_speech
	$(PY) -m eval.stands_alone
	$(PY) -m eval.statement_subject
	$(PY) -m eval.task_reading
	$(PY) -m eval.topic_words
	$(PY) -m eval.recall_unrelated
	$(PY) -m eval.recall_people
	$(PY) -m eval.locomo

# Long generated histories (recall against raw transcript search at equal character budgets) and the
# month-of-conversations scenario: writes their sections of docs/quality.md. About 15 minutes.
eval-long: db-start
	$(PY) -m eval.long_history
