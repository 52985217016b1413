"""Recall within the caller's room (``max_chars``): every line dated by when the customer said it, the room
filled nearest first, what did not fit counted — and still nothing for an unrelated question."""

import datetime

import pytest
from django.urls import reverse

from tests.support.recall import tell, tell_at

pytestmark = pytest.mark.django_db

TOLD = datetime.datetime(2023, 6, 27, 14, tzinfo=datetime.UTC)
WORKSHOP = "Last Friday I went to an LGBTQ+ counseling workshop and it was really enlightening."
DETAIL = "They talked about therapeutic methods and how to best work with trans people."


def recall(client, space, query, **extra):
    url = reverse("recall", args=[space.external_id])
    return client.post(url, {"query": query, **extra}, format="json")


def told(client, space):
    tell_at(client, space, f"{WORKSHOP} {DETAIL}", TOLD, "s-june")
    tell_at(client, space, "I love hiking in the mountains with my kids.", TOLD + datetime.timedelta(days=30), "s-july")
    tell_at(client, space, "My favourite food is ramen.", TOLD + datetime.timedelta(days=60), "s-aug")
    tell_at(client, space, "I'd love to work as a counselor one day.", TOLD + datetime.timedelta(days=61), "s-aug")
    tell_at(client, space, "My counseling course starts in September.", TOLD + datetime.timedelta(days=62), "s-aug")


def test_each_line_says_when_the_customer_said_it(client_a, space_a):
    told(client_a, space_a)
    body = recall(client_a, space_a, "When did I go to the counseling workshop?").json()
    assert f"- [fact, said 2023-06-27] {WORKSHOP}" in body["prompt"].splitlines()


def test_the_room_is_filled_nearest_first_within_its_size(client_a, space_a):
    told(client_a, space_a)
    response = recall(client_a, space_a, "Did I go to a counseling workshop?", max_chars=400)
    assert response.status_code == 200, response.content
    body = response.json()
    statements = [m for m in body["memories"] if m["kind"] != "topic"]
    # Both of the workshop's statements, among the customer's other counselling plans ("I'd love to work as a
    # counselor one day.", nearer to the question's words), all in the room.
    assert {m["content"] for m in statements} >= {WORKSHOP, DETAIL}
    distances = [m["score"]["distance"] for m in statements]
    assert distances == sorted(distances)
    lines = body["prompt"].splitlines()[1:]
    assert sum(len(line) + 1 for line in lines) <= 400
    assert body["left_out"] == 0


def test_past_the_rows_that_pass_the_room_holds_the_next_nearest_statements(client_a, space_a):
    told(client_a, space_a)
    body = recall(client_a, space_a, "Tell me about the counseling workshop", max_chars=1000).json()
    statements = [m for m in body["memories"] if m["kind"] != "topic"]
    unsure = [m for m in statements if m["score"]["relevance"] < 0.7]
    assert len(unsure) >= 3
    distances = [m["score"]["distance"] for m in statements]
    assert distances == sorted(distances)
    assert {m["content"] for m in statements} >= {WORKSHOP, DETAIL}


def test_what_does_not_fit_is_counted_not_hidden(client_a, space_a):
    told(client_a, space_a)
    roomy = recall(client_a, space_a, "Tell me about the counseling workshop", max_chars=1000).json()
    answering = [m for m in roomy["memories"] if m["score"]["relevance"] is not None and m["kind"] != "topic"]
    tight = recall(client_a, space_a, "Tell me about the counseling workshop", max_chars=100).json()
    shown = [m for m in tight["memories"] if m["kind"] != "topic"]
    assert len(shown) < len(answering)
    assert tight["left_out"] >= 1
    assert "left_out" not in recall(client_a, space_a, "Tell me about the counseling workshop").json()


def test_an_unrelated_question_gets_nothing_however_much_room(client_a, space_a):
    told(client_a, space_a)
    body = recall(client_a, space_a, "What is the capital of Peru?", max_chars=5000).json()
    assert body["memories"] == []
    assert body["left_out"] == 0


@pytest.mark.parametrize("max_chars", [0, 99, 100_001, "lots", None, True])
def test_a_room_that_is_not_a_sensible_number_is_a_400(client_a, space_a, max_chars):
    response = recall(client_a, space_a, "Where do I live?", max_chars=max_chars)
    assert response.status_code == 400
    assert "max_chars" in response.json()["error"]["details"]


def test_a_turn_recalls_within_the_room_it_is_given(client_a, space_a):
    told(client_a, space_a)
    url = reverse("turn-create", args=[space_a.external_id])
    body = {"message": "What did they cover at that counseling workshop?", "session_id": "s-oct", "max_chars": 200}
    answer = client_a.post(url, body, format="json").json()
    assert WORKSHOP in answer["prompt"]
    assert sum(len(line) + 1 for line in answer["prompt"].splitlines()[1:]) <= 200
    assert "left_out" in answer
    unbounded = {"message": "And the hiking?", "session_id": "s-oct"}
    assert "left_out" not in client_a.post(url, unbounded, format="json").json()


WEEK = [
    "On Mondays I swim at the city pool.",
    "On Tuesdays I take a pottery class.",
    "On Wednesdays I practise the cello.",
    "On Thursdays I play chess at the library.",
    "On Fridays I cook dinner for my parents.",
    "On Saturdays I run along the river.",
    "On Sundays I bake sourdough bread.",
    "Every morning I walk my neighbour's beagle.",
    "Every evening I read a chapter of a novel.",
    "I volunteer at the food bank twice a month.",
    "I sing in a choir every other Thursday night.",
    "I go climbing at the bouldering gym after work.",
    "I tend my allotment on weekday mornings.",
    "I teach my niece Spanish on Monday evenings.",
    "I do yoga before breakfast.",
    "I repair old bicycles in my garage.",
    "I paint watercolours of the harbour.",
    "I take the ferry to my office.",
    "I play five-a-side football on Wednesday nights.",
    "I knit scarves for the winter market.",
    "I learn Japanese with an app at lunch.",
    "I ride my motorbike to the coast in summer.",
    "I visit my grandmother in the care home on Fridays.",
    "I write a short poem each night.",
    "I collect vinyl records of jazz pianists.",
    "I brew my own ginger beer.",
    "I coach a junior basketball team.",
    "I photograph birds in the marshes.",
    "I play the drums in a garage band.",
    "I sew my own summer dresses.",
]


def test_a_roomy_budget_is_filled_past_the_twentieth_nearest_statement(client_a, space_a):
    # Recall reads only the twenty nearest statements when it returns what passes; a caller's room must
    # still be filled from as many as fit.
    tell(client_a, space_a, *WEEK)
    body = recall(client_a, space_a, "What do I do on weekdays?", max_chars=3000, limit=50).json()
    statements = [m for m in body["memories"] if m["kind"] != "topic"]
    assert len(statements) > 25, [m["content"] for m in statements]
    assert sum(len(line) + 1 for line in body["prompt"].splitlines()[1:]) <= 3000


def test_a_statement_near_any_query_vector_is_read_though_far_from_the_first(client_a, space_a):
    # With several query vectors (a question and its phrases), "among the nearest" means for any of them.
    from memory.recall.candidates import MeaningBounds, candidate_rows
    from memory.text.vectors import embed_for_space
    from tenants import scope

    tell(client_a, space_a, *WEEK)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        vectors = embed_for_space(space_a.id, ["What instrument do I practise?", "bicycle repairs in a garage"])
        rows = candidate_rows(
            space=space_a, vectors=vectors, kinds=None, keyword_digests=[], topic_digests=set(),
            bounds=MeaningBounds(alone=0.0, corroborated=0.0), nearest_shown=3,
        )  # fmt: skip
    assert "I repair old bicycles in my garage." in [row.content for row in rows]


def test_an_operator_who_lowers_the_admit_probability_gets_rows_past_the_twentieth(client_a, space_a):
    # At the default the gate admits nothing that far; an operator who lowers it is offered every statement found.
    tell(client_a, space_a, *WEEK)
    url = reverse("space-detail", args=[space_a.external_id])
    assert client_a.patch(url, {"settings": {"relevance_admit": 0.0}}, format="json").status_code == 200
    body = recall(client_a, space_a, "What do I do on weekdays?", limit=50).json()
    assert len([m for m in body["memories"] if m["kind"] != "topic"]) > 20
