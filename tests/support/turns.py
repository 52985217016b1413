"""A customer's turn and a recall through the real API, as an agent's loop makes them."""

from __future__ import annotations

from django.urls import reverse


def say(client, space, message, session="s"):
    """Post a turn and wait for it to be processed; the turn's response body."""
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    response = client.post(url, {"message": message, "session_id": session}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def recall(client, space, query):
    response = client.post(reverse("recall", args=[space.external_id]), {"query": query}, format="json")
    assert response.status_code == 200, response.content
    return response.json()
