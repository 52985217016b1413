"""Never lose a turn: retries when the model or embeddings are down, one row under concurrency."""

import datetime
import threading

import pytest
from django.db import connection, connections
from django.urls import reverse
from django.utils import timezone

from memory.models import Memory, Turn
from memory.turns.intake import receive_turn
from memory.turns.pipeline import attempt_turn, requeue_due_turns, run_turn
from tenants import scope
from tests.conftest import make_space
from tests.support.worker import FLEET, make_due


def turn_state(space, turn_id):
    with scope.tenant_scope(space.tenant_id, space):
        return Turn.objects.get(pk=turn_id)


def facts(space):
    with scope.tenant_scope(space.tenant_id, space):
        return [(m.content, m.mention_count) for m in Memory.objects.filter(kind="fact")]


@pytest.mark.django_db
def test_a_turn_survives_the_model_being_down_and_completes_when_it_is_back(client_a, space_a, openai_engines):
    openai_engines.down = True
    url = reverse("turn-create", args=[space_a.external_id])
    turn_id = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json").json()["turn_id"]

    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn_id) == "queued"
    failed_once = turn_state(space_a, turn_id)
    assert failed_once.attempts == 1
    assert "503" in failed_once.error or "overloaded" in failed_once.error
    assert failed_once.next_attempt_at > timezone.now()
    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn_id) == "not-due"

    openai_engines.down = False
    openai_engines.replies = [FLEET]
    make_due(space_a, turn_id)
    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn_id) == "done"
    done = turn_state(space_a, turn_id)
    assert (done.status, done.attempts, done.error) == ("done", 2, "")
    assert facts(space_a) == [("We run a fleet of four vans.", 1)]
    # A late duplicate wake-up does nothing more.
    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn_id) == "done"
    assert facts(space_a) == [("We run a fleet of four vans.", 1)]


def age(space, turn_id, seconds):
    with scope.tenant_scope(space.tenant_id, space):
        Turn.objects.filter(pk=turn_id).update(created_at=timezone.now() - datetime.timedelta(seconds=seconds))


@pytest.mark.django_db
def test_a_model_outage_delays_a_turn_and_past_the_wait_the_offline_engine_derives_it(
    settings, client_a, space_a, openai_engines
):
    """The model down for longer than the retry schedule loses nothing (a fault run once ended 5 of 11 turns
    failed for good): the turn keeps waiting with a capped backoff, whatever ENGRAM_TURN_MAX_ATTEMPTS says, and
    past ENGRAM_MODEL_WAIT_SECONDS the offline engine derives it, marked so, exactly once."""
    settings.ENGRAM_TURN_MAX_ATTEMPTS = 3
    settings.ENGRAM_TURN_RETRY_MAX_SECONDS = 30
    settings.ENGRAM_MODEL_WAIT_SECONDS = 600
    openai_engines.down = True
    url = reverse("turn-create", args=[space_a.external_id])
    turn_id = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json").json()["turn_id"]
    delays = []
    for _ in range(6):
        make_due(space_a, turn_id)
        before = timezone.now()
        assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn_id) == "queued"
        delays.append((turn_state(space_a, turn_id).next_attempt_at - before).total_seconds())
    assert delays[1] > delays[0] * 1.5  # exponential backoff …
    assert max(delays) <= 31  # … under its ceiling
    waiting = turn_state(space_a, turn_id)
    assert (waiting.status, waiting.attempts, waiting.derived_offline) == ("queued", 6, False)
    assert facts(space_a) == []

    age(space_a, turn_id, 601)
    make_due(space_a, turn_id)
    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn_id) == "done"
    done = turn_state(space_a, turn_id)
    assert (done.status, done.derived_offline) == ("done", True)
    assert "derived by the offline engine" in done.error
    assert facts(space_a) == [("We run a fleet of four vans.", 1)]
    detail = client_a.get(reverse("turn-detail", args=[turn_id])).json()
    assert detail["status"] == "done" and detail["derived_offline"] is True
    openai_engines.down = False
    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn_id) == "done"
    assert facts(space_a) == [("We run a fleet of four vans.", 1)]  # exactly once


@pytest.mark.django_db
def test_a_turn_that_keeps_crashing_is_marked_failed_and_can_be_queued_again(
    settings, monkeypatch, client_a, client_b, space_a, key_a
):
    """A bug (not an outage) fails a turn after its attempts, visibly; an admin key, or the management command,
    queues it again once the cause is gone, and it completes. A turns-only key and another tenant cannot."""
    from django.core.management import call_command

    from memory.turns import pipeline
    from tenants.api_keys import issue_api_key
    from tests.conftest import api_client

    settings.ENGRAM_TURN_MAX_ATTEMPTS = 2
    real_analyse = pipeline.analyse

    def crash(*args, **kwargs):
        raise RuntimeError("a bug in the pipeline")

    monkeypatch.setattr(pipeline, "analyse", crash)
    url = reverse("turn-create", args=[space_a.external_id])
    turn_id = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json").json()["turn_id"]
    for _ in range(2):
        make_due(space_a, turn_id)
        run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn_id)
    failed = turn_state(space_a, turn_id)
    assert failed.status == "failed" and failed.attempts == 2 and "a bug" in failed.error
    detail = client_a.get(reverse("turn-detail", args=[turn_id])).json()
    assert detail["status"] == "failed" and "a bug" in detail["error"]

    retry = reverse("turn-retry", args=[turn_id])
    turns_only = api_client(issue_api_key(tenant=space_a.tenant, name="agent", scopes=["turns"]).secret)
    assert turns_only.post(retry).status_code == 403
    assert client_b.post(retry).status_code == 404
    monkeypatch.setattr(pipeline, "analyse", real_analyse)
    queued = client_a.post(retry)
    assert queued.status_code == 202 and queued.json()["status"] == "queued"
    assert client_a.post(retry).status_code == 409  # only a failed turn
    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn_id) == "done"
    assert facts(space_a) == [("We run a fleet of four vans.", 1)]

    monkeypatch.setattr(pipeline, "analyse", crash)
    other = client_a.post(url, {"message": "Our depot is in Brno."}, format="json").json()["turn_id"]
    for _ in range(2):
        make_due(space_a, other)
        run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=other)
    assert turn_state(space_a, other).status == "failed"
    monkeypatch.setattr(pipeline, "analyse", real_analyse)
    call_command("requeue_failed_turns", "--tenant", space_a.tenant.slug)
    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=other) == "done"


@pytest.mark.django_db
def test_the_embedding_endpoint_down_keeps_the_turn_queued(settings, client_a, space_a):
    settings.ENGRAM_EMBEDDING_ENGINE = "openai"
    settings.ENGRAM_EMBEDDING_BASE_URL = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    settings.ENGRAM_MODEL_MAX_RETRIES = 0
    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    body = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json").json()
    assert body["status"] == "queued"
    assert "embedding endpoint failed" in body["error"]
    assert facts(space_a) == []


@pytest.mark.django_db
def test_a_turn_whose_worker_died_is_picked_up_again(client_a, space_a):
    url = reverse("turn-create", args=[space_a.external_id])
    turn_id = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json").json()["turn_id"]
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Turn.objects.filter(pk=turn_id).update(
            status="processing", attempts=1, updated_at=timezone.now() - datetime.timedelta(hours=1)
        )
    assert requeue_due_turns() == 1
    assert turn_state(space_a, turn_id).status == "queued"
    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn_id) == "done"
    assert facts(space_a) == [("We run a fleet of four vans.", 1)]


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_turns_carrying_the_same_fact_write_one_row(tenant_a):
    space = make_space(tenant_a, "concurrent")
    barrier = threading.Barrier(2)
    errors = []

    def one_turn(session_id):
        try:
            with scope.tenant_scope(tenant_a, space):
                turn = receive_turn(space=space, message="We run a fleet of four vans.", session_id=session_id).turn
                barrier.wait(timeout=10)
                attempt_turn(turn)
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=one_turn, args=(f"s{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert facts(space) == [("We run a fleet of four vans.", 2)]
    with scope.tenant_scope(tenant_a, space):
        assert Memory.objects.filter(kind="topic").count() == 1


@pytest.mark.django_db
def test_no_column_uses_the_float32_vector_type():
    """The bundled pgvector build crashes the server on float32 vector distances on CPUs without
    AVX-512 (docs/decisions/0004); every embedding column must be halfvec."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE udt_name = 'vector' AND table_schema = current_schema()"
        )
        assert cursor.fetchall() == []


@pytest.mark.django_db
def test_reembed_rewrites_every_vector_and_reports_progress(client_a, space_a, capsys):
    from django.core.management import call_command

    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    client_a.post(url, {"message": "We run a fleet of four vans. Our renewal is in May."}, format="json")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Memory.objects.update(embedding=[0.0] * 383 + [1.0])
    call_command("reembed", "--tenant", "alice")
    output = capsys.readouterr().out
    assert "re-embedded 4/4" in output
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert all(abs(float(m.embedding[-1]) - 1.0) > 0.01 for m in Memory.objects.all())


@pytest.mark.django_db
def test_a_pipeline_crash_with_wait_keeps_the_turn_stored_and_queued(settings, client_a, space_a):
    settings.ENGRAM_EXTRACTION_ENGINE = "misconfigured"  # get_extractor raises a plain ValueError
    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    response = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "queued" and "misconfigured" in body["error"]
    state = turn_state(space_a, body["turn_id"])
    assert state.attempts == 1 and state.next_attempt_at is not None


@pytest.mark.django_db
def test_the_console_shows_the_queue_and_queues_failed_turns_again(settings, monkeypatch, client, client_a, space_a):
    """The overview shows how many turns wait and the oldest one's age; an operator queues the failed ones
    again with one button; support staff get no button and cannot post it."""
    from memory.turns import pipeline
    from tenants.tenant_admin import create_operator

    settings.ENGRAM_TURN_MAX_ATTEMPTS = 1
    real_analyse = pipeline.analyse
    monkeypatch.setattr(pipeline, "analyse", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("a bug")))
    url = reverse("turn-create", args=[space_a.external_id])
    failing = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json").json()["turn_id"]
    run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=failing)
    waiting = client_a.post(url, {"message": "Our depot is in Brno."}, format="json").json()["turn_id"]
    age(space_a, waiting, 720)
    monkeypatch.setattr(pipeline, "analyse", real_analyse)

    support = create_operator(tenant=space_a.tenant, username="sue", password="a-long-password", role="support")
    client.force_login(support.user)
    page = client.get("/console/").content.decode()
    assert "oldest waiting 12 min" in page and "failed turn again" not in page
    assert client.post("/console/turns/requeue-failed/").status_code == 403
    assert turn_state(space_a, failing).status == "failed"

    operator = create_operator(tenant=space_a.tenant, username="otto", password="a-long-password", role="operator")
    client.force_login(operator.user)
    assert "Queue the 1 failed turn again" in client.get("/console/").content.decode()
    response = client.post("/console/turns/requeue-failed/", follow=True)
    assert "1 failed turn(s) queued again." in response.content.decode()
    assert turn_state(space_a, failing).status == "queued"
    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=failing) == "done"
