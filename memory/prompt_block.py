"""The prompt block: recalled memories as plain text for the agent's system prompt, within a token budget.

>>> estimate_tokens("We run four vans.")
5
"""

from __future__ import annotations

import math

from memory.text_analysis import _CJK

HEADER = "What you already know about this customer (from earlier conversations; most useful first):"


def estimate_tokens(text: str) -> int:
    """About four characters a token for alphabetic scripts, one a character for CJK."""
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def line_for(hit) -> str:
    label = hit["kind"]
    if hit.get("event_at"):
        label += f", {hit['event_at'].date().isoformat()}"
    return f"- [{label}] {hit['content']}"


def build_prompt(hits: list[dict], budget_tokens: int) -> str:
    if not hits:
        return ""
    lines, used = [HEADER], estimate_tokens(HEADER)
    for hit in hits:
        line = line_for(hit)
        cost = estimate_tokens(line) + 1
        if used + cost > budget_tokens:
            break
        lines.append(line)
        used += cost
    return "\n".join(lines) if len(lines) > 1 else ""
