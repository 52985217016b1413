"""Telling a space something through the API (and waiting for the worker), then recalling from it."""

from __future__ import annotations

from django.urls import reverse


def tell(client, space, *messages, session="s1"):
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    for index, message in enumerate(messages):
        response = client.post(url, {"message": message, "session_id": f"{session}-{index}"}, format="json")
        assert response.json()["status"] == "done", response.content


def tell_at(client, space, message, at, session):
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    body = {"message": message, "session_id": session, "at": at.isoformat()}
    response = client.post(url, body, format="json")
    assert response.json()["status"] == "done", response.content


def recall(client, space, query, **extra):
    response = client.post(reverse("recall", args=[space.external_id]), {"query": query, **extra}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def contents(body):
    return [m["content"] for m in body["memories"]]
