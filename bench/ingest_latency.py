"""Ingest time per turn with the offline extractor and the in-process embeddings, p50/p95.

Each turn goes through the whole write path inline (store, extract, ground, embed once,
de-duplicate under the space lock, write), as ``POST .../turns?wait=true`` runs it.
"""

from __future__ import annotations

import random
import sys

from bench.harness import median, percentile, setup_django, throwaway_database, timed, write_section

SENTENCES = [
    "We run a fleet of {n} vans.",
    "Our renewal is in {month}.",
    "Please always call me before a delivery.",
    "We never deliver on Sundays.",
    "Our van broke down yesterday.",
    "I need to update the billing address tomorrow.",
    "We have {n} drivers in Brno.",
    "Hi! Thanks for the quick answer.",
    "Can you check my last invoice?",
    "Наше продление договора в мае.",
    "私たちは毎週月曜日に配送します。",
    "Máme {n} dodávky.",
]
MONTHS = ["May", "June", "July", "March"]


def main(turns: int = 120) -> str:
    setup_django()
    from memory.turns.take_turn import take_turn
    from tenants import scope, spaces
    from tenants.tenant_admin import create_tenant

    rng = random.Random(7)
    with throwaway_database():
        tenant = create_tenant(name="Bench", slug="bench")
        with scope.tenant_scope(tenant):
            space = spaces.create_space(tenant=tenant, external_id="bench-customer")
        timings = []

        def one(text, session):
            with scope.tenant_scope(tenant, space):
                take_turn(space=space, message=text, session_id=session, actor="bench", wait=True)

        one("We run a fleet of four vans.", "warm-up")
        from memory.recall.prompt_block import estimate_tokens
        from memory.recall.search import recall

        prompt_tokens, transcript_tokens, transcript = [], [], 0
        for index in range(turns):
            text = " ".join(
                rng.choice(SENTENCES).format(n=rng.randint(2, 9), month=rng.choice(MONTHS))
                for _ in range(rng.randint(1, 3))
            )
            timings.append(timed(lambda text=text, index=index: one(text, f"s{index // 5}")))
            transcript += estimate_tokens(text)
            with scope.tenant_scope(tenant, space):
                prompt_tokens.append(estimate_tokens(recall(space=space, query=text).prompt))
            transcript_tokens.append(transcript)
        with scope.tenant_scope(tenant, space):
            from memory.models import Memory

            rows = Memory.objects.count()
    body = (
        f"{turns} turns of 1–3 sentences (English, Russian, Japanese, Czech) into one space, offline extractor, "
        f"in-process embeddings, inline (`?wait=true` path).\n\n"
        f"| p50 | p95 | max | memory rows after |\n|---|---|---|---|\n"
        f"| {median(timings):.1f} ms | {percentile(timings, 95):.1f} ms | {max(timings):.1f} ms | {rows} |\n\n"
        f"Prompt block per turn (recall for that turn's message, default budget 600): median "
        f"{median(prompt_tokens):.0f} tokens, p95 {percentile(prompt_tokens, 95):.0f}, max {max(prompt_tokens)}. "
        f"Sending the whole transcript instead: median {median(transcript_tokens):.0f} tokens, "
        f"p95 {percentile(transcript_tokens, 95):.0f}, {transcript_tokens[-1]} by turn {turns} (customer side only, "
        f"so a lower bound)."
    )
    write_section("Ingest time per turn (offline engines)", body)
    return body


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 120))
