"""Ingest time per turn with the offline extractor and the in-process embeddings, p50/p95.

Each turn goes through the whole write path inline (store, extract, ground, embed once,
de-duplicate under the space lock, write), as ``POST .../turns?wait=true`` runs it. The same turns
then go into a second space as an agent and the worker take them: the request without ``wait``
(store, forget check, recall, queue), then the worker's pipeline (``pipeline.attempt_turn``) with
nothing cached, as a worker in its own process sees a new message (only the vector the request
stored with the message, read from its row). Where that time goes is
measured per stage (exclusive wall time: a stage's time excludes the stages it calls).
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import time

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
TARGET_PIPELINE_P50_MS = 25.0


class StageClock:
    """Exclusive wall time per named stage, for functions swapped in by ``installed(plan)``: a stage's
    time excludes the stages it calls (the forget check's own queries count, an embedding it asks for not)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._stack: list[list] = []  # per running stage: [started, seconds spent in the stages it called]

    def _timed(self, original, stage: str):
        def timed_stage(*args, **kwargs):
            frame = [time.perf_counter(), 0.0]
            self._stack.append(frame)
            try:
                return original(*args, **kwargs)
            finally:
                self._stack.pop()
                elapsed = time.perf_counter() - frame[0]
                self.seconds[stage] = self.seconds.get(stage, 0.0) + elapsed - frame[1]
                if self._stack:
                    self._stack[-1][1] += elapsed

        return timed_stage

    @contextlib.contextmanager
    def installed(self, plan):
        originals = []
        for owner, name, stage in plan:
            originals.append((owner, name, getattr(owner, name)))
            self.seconds.setdefault(stage, 0.0)
            setattr(owner, name, self._timed(getattr(owner, name), stage))
        try:
            yield self
        finally:
            for owner, name, original in reversed(originals):
                setattr(owner, name, original)


def workload(turns: int) -> list[str]:
    rng = random.Random(7)
    return [
        " ".join(
            rng.choice(SENTENCES).format(n=rng.randint(2, 9), month=rng.choice(MONTHS))
            for _ in range(rng.randint(1, 3))
        )
        for _ in range(turns)
    ]


def stage_plan():
    """Where the clock goes: the turn request's steps and the worker pipeline's."""
    from memory.extraction import offline
    from memory.forgetting import conversational
    from memory.recall import search
    from memory.turns import intake, pipeline
    from memory.turns import sequence as turn_sequence

    return [
        (intake, "receive_turn", "request: store the message, queue the turn"),
        (turn_sequence, "vectors_by_text", "request: embed the message (once)"),
        (conversational, "forget", "request: forget check"),
        (search, "recall", "request: recall"),
        (offline.OfflineExtractor, "extract", "pipeline: extraction (offline rules)"),
        (pipeline, "vectors_by_text", "pipeline: embedding (entries + their sentences)"),
        (pipeline, "ground", "pipeline: grounding"),
        (pipeline, "write_entries", "pipeline: de-duplicate and write (space lock)"),
    ]


def uncached_vectors(space_id, texts, known=None):
    """The pipeline's embedding as a worker that has seen none of these texts computes it."""
    from memory.text import vectors

    cached = vectors.embed_for_space
    vectors.embed_for_space = lambda space_id, texts: vectors.into_space(space_id, vectors.get_embedder().embed(texts))
    try:
        return vectors.vectors_by_text(space_id, texts, known)
    finally:
        vectors.embed_for_space = cached


class SeparateProcesses:
    """The request's and the worker's per-space language memory kept apart, as in two processes
    (memory/text/analysis.py): the worker has read its earlier turns' texts, not this request's."""

    def __init__(self):
        from memory.text import analysis

        self.analysis = analysis
        self.request_side = analysis.SpaceLanguages(analysis.SPACE_LANGUAGES.max_entries)
        self.worker_side = analysis.SpaceLanguages(analysis.SPACE_LANGUAGES.max_entries)

    @contextlib.contextmanager
    def request(self):
        with self._as(self.request_side):
            yield

    @contextlib.contextmanager
    def worker(self):
        with self._as(self.worker_side):
            yield

    @contextlib.contextmanager
    def _as(self, languages):
        shared = self.analysis.SPACE_LANGUAGES
        self.analysis.SPACE_LANGUAGES = languages
        try:
            yield
        finally:
            self.analysis.SPACE_LANGUAGES = shared


def one_sentence_facts(tenant, spaces, take_turn, pipeline, scope, count: int = 120):
    """The issue's workload (bench/recall_workload.py: one-sentence customer facts, as in the mem0
    comparison) through the request without ``wait`` and then the worker's pipeline, its embedding
    uncached: (worker times in ms, texts the worker embedded per turn)."""
    from bench.recall_workload import build_workload

    workload = build_workload(spaces=3, facts_per_space=count // 3, questions=0)
    with scope.tenant_scope(tenant):
        targets = [spaces.create_space(tenant=tenant, external_id=f"bench-{s['name']}") for s in workload["spaces"]]
    embedded = []
    original_vectors = pipeline.vectors_by_text

    def counted(space_id, texts, known=None):
        embedded[-1] += len({t for t in texts if t not in (known or {})})
        return uncached_vectors(space_id, texts, known)

    times = []
    processes = SeparateProcesses()
    pipeline.vectors_by_text = counted
    try:
        for position in range(count // 3):
            for space, listed in zip(targets, workload["spaces"], strict=True):
                with scope.tenant_scope(tenant, space):
                    with processes.request():
                        taken = take_turn(space=space, message=listed["facts"][position], actor="bench")
                    embedded.append(0)
                    with processes.worker():
                        started = time.perf_counter()
                        pipeline.attempt_turn(taken.turn)
                        times.append((time.perf_counter() - started) * 1000)
    finally:
        pipeline.vectors_by_text = original_vectors
    return times, sum(embedded) / len(embedded)


def main(turns: int = 120) -> str:
    setup_django()
    from memory.models import Memory
    from memory.recall.prompt_block import estimate_tokens
    from memory.recall.search import recall
    from memory.turns import pipeline
    from memory.turns.sequence import take_turn
    from tenants import scope, spaces
    from tenants.tenant_admin import create_tenant

    texts = workload(turns)
    with throwaway_database():
        tenant = create_tenant(name="Bench", slug="bench")
        with scope.tenant_scope(tenant):
            space = spaces.create_space(tenant=tenant, external_id="bench-customer")
            worker_space = spaces.create_space(tenant=tenant, external_id="bench-worker")

        def inline(text, session):
            with scope.tenant_scope(tenant, space):
                take_turn(space=space, message=text, session_id=session, actor="bench", wait=True)

        inline("We run a fleet of four vans.", "warm-up")
        timings, prompt_tokens, transcript_tokens, transcript = [], [], [], 0
        for index, text in enumerate(texts):
            timings.append(timed(lambda text=text, index=index: inline(text, f"s{index // 5}")))
            transcript += estimate_tokens(text)
            with scope.tenant_scope(tenant, space):
                prompt_tokens.append(estimate_tokens(recall(space=space, query=text).prompt))
            transcript_tokens.append(transcript)
        with scope.tenant_scope(tenant, space):
            rows = Memory.objects.count()

        # The same turns as the API without wait, then the worker: its embedding cache has none of them.
        requests, worker, worker_cpu = [], [], []
        load_before = os.getloadavg()[0]
        clock = StageClock()
        processes = SeparateProcesses()
        original_vectors = pipeline.vectors_by_text
        pipeline.vectors_by_text = uncached_vectors
        try:
            with clock.installed(stage_plan()):
                for index, text in enumerate(texts):
                    with scope.tenant_scope(tenant, worker_space):
                        with processes.request():
                            started = time.perf_counter()
                            taken = take_turn(
                                space=worker_space, message=text, session_id=f"s{index // 5}", actor="bench"
                            )
                            requests.append((time.perf_counter() - started) * 1000)
                        with processes.worker():
                            started, started_cpu = time.perf_counter(), time.process_time()
                            pipeline.attempt_turn(taken.turn)
                            worker.append((time.perf_counter() - started) * 1000)
                            worker_cpu.append((time.process_time() - started_cpu) * 1000)
        finally:
            pipeline.vectors_by_text = original_vectors
        facts_worker, facts_embedded = one_sentence_facts(tenant, spaces, take_turn, pipeline, scope)
        load_after = os.getloadavg()[0]
    total_ms = sum(requests) + sum(worker)
    stage_rows = "\n".join(
        f"| {stage} | {seconds * 1000 / turns:.1f} | {seconds * 1000 / total_ms * 100:.0f}% |"
        for stage, seconds in clock.seconds.items()
    )
    other_ms = total_ms - sum(clock.seconds.values()) * 1000
    p50 = median(worker)

    def verdict(p50):
        if p50 <= TARGET_PIPELINE_P50_MS:
            return f"**met** ({p50:.1f} ms)"
        return f"**not met**: {p50:.1f} ms, {p50 - TARGET_PIPELINE_P50_MS:.1f} ms over"

    body = (
        f"{turns} turns of 1–3 sentences (English, Russian, Japanese, Czech) into one space, offline extractor, "
        f"in-process embeddings, inline (`?wait=true` path).\n\n"
        f"| p50 | p95 | max | memory rows after |\n|---|---|---|---|\n"
        f"| {median(timings):.1f} ms | {percentile(timings, 95):.1f} ms | {max(timings):.1f} ms | {rows} |\n\n"
        f"Prompt block per turn (recall for that turn's message, default budget 600): median "
        f"{median(prompt_tokens):.0f} tokens, p95 {percentile(prompt_tokens, 95):.0f}, max {max(prompt_tokens)}. "
        f"Sending the whole transcript instead: median {median(transcript_tokens):.0f} tokens, "
        f"p95 {percentile(transcript_tokens, 95):.0f}, {transcript_tokens[-1]} by turn {turns} (customer side only, "
        f"so a lower bound).\n\n"
        f"The same {turns} turns into a second space as an agent and the worker take them: the request without "
        f"`wait` (store, forget check, recall, queue), then the worker's pipeline (`pipeline.attempt_turn`) with "
        f"no vector cached (a worker in its own process has not seen the message); it reads the message's vector the "
        f"request stored with it, so a one-sentence message whose entry is the sentence is not embedded again.\n\n"
        f"| | p50 | p95 | max |\n|---|---|---|---|\n"
        f"| turn request (no wait) | {median(requests):.1f} ms | {percentile(requests, 95):.1f} ms "
        f"| {max(requests):.1f} ms |\n"
        f"| worker pipeline alone | {p50:.1f} ms | {percentile(worker, 95):.1f} ms | {max(worker):.1f} ms |\n"
        f"| worker pipeline alone, CPU time of this process (the database's excluded) | {median(worker_cpu):.1f} ms "
        f"| {percentile(worker_cpu, 95):.1f} ms | {max(worker_cpu):.1f} ms |\n"
        f"| worker pipeline alone, {len(facts_worker)} one-sentence facts (the mem0 comparison's workload, 3 spaces) "
        f"| {median(facts_worker):.1f} ms | {percentile(facts_worker, 95):.1f} ms | {max(facts_worker):.1f} ms |\n\n"
        f"On the one-sentence facts the worker embedded {facts_embedded:.2f} texts a turn (a topic name the "
        f"extractor proposes that is not one of the attribute names, which a process embeds once for every "
        f"space; the fact is the message, whose vector the request stored).\n\n"
        f"Load average (1 min) on the machine while this ran: {load_before:.1f} before, {load_after:.1f} after "
        f"({os.cpu_count()} cores); wall times above grow with it, CPU time much less.\n\n"
        f"Target for the pipeline: ≤ {TARGET_PIPELINE_P50_MS:.0f} ms p50 — on the mixed turns {verdict(p50)}; "
        f"on the one-sentence facts {verdict(median(facts_worker))}.\n\n"
        f"Where the time goes (request + pipeline, mean per turn, exclusive wall time):\n\n"
        f"| stage | ms per turn | share |\n|---|---|---|\n{stage_rows}\n"
        f"| other (transactions, turn bookkeeping, ORM) | {other_ms / turns:.1f} | {other_ms / total_ms * 100:.0f}% |\n"
    )
    write_section("Ingest time per turn (offline engines)", body)
    return body


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 120))
