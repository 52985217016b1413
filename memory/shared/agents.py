"""Which agents use a shared space, and which of them a change of its matching settings affects."""

from __future__ import annotations

from django.utils import timezone

from memory.models import SpaceAgent
from tenants.models import ApiKey, Space

# Settings that change how every agent's inputs are matched in a shared space.
MATCHING_SETTINGS = (
    "episode_min_score", "episode_examples", "episode_hybrid", "escalation_min_score", "duplicate_min_score",
)  # fmt: skip


def note_agent(space: Space, agent: str) -> None:
    if not agent:
        return
    now = timezone.now()
    if not SpaceAgent.objects.filter(space=space, agent=agent).update(last_seen_at=now):
        SpaceAgent.objects.get_or_create(
            space=space, agent=agent, defaults={"tenant_id": space.tenant_id, "last_seen_at": now}
        )


def known_agents(space: Space) -> set[str]:
    """Agents seen in the space, agents with their own search keys, and agents bound to active API keys."""
    seen = set(SpaceAgent.objects.filter(space=space).values_list("agent", flat=True))
    bound = set(
        ApiKey.objects.filter(tenant_id=space.tenant_id, revoked_at__isnull=True)
        .exclude(agent="")
        .values_list("agent", flat=True)
    )
    overridden = set((space.settings or {}).get("agent_search_keys", {}))
    return seen | bound | overridden


def affected_agents(space: Space, before: dict, after: dict) -> list[str]:
    """The agents whose matching a change from ``before`` to ``after`` (effective settings) alters."""
    agents = known_agents(space) | set(before["agent_search_keys"]) | set(after["agent_search_keys"])
    affected = set()
    if any(before[name] != after[name] for name in MATCHING_SETTINGS):
        affected |= agents
    if before["episode_search_keys"] != after["episode_search_keys"]:
        # Agents with their own search keys do not use the space's.
        affected |= {a for a in agents if a not in after["agent_search_keys"]}
    for agent in agents:
        if before["agent_search_keys"].get(agent) != after["agent_search_keys"].get(agent):
            affected.add(agent)
    return sorted(affected)
