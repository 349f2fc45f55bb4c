"""The ``soak`` scenario: a million structured candidates through one worker.

The worker's resident set is sampled all along (its slope over the second
half), and Milvus search latency is measured through
:class:`~slotwise.sinks.milvus.index.MilvusIndex` near the start and at the end,
with query vectors embedded beforehand, so a search is timed alone.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
import uuid
from collections.abc import Sequence
from dataclasses import replace

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.loadtest.measure import overall_rate, slope, sustained_rate
from slotwise.loadtest.results import Figure, percentile
from slotwise.loadtest.runner import Bench, RssSampler
from slotwise.loadtest.scenarios import SCHEMA, Follower, Options, RunResult, preload
from slotwise.processors.ports import Embedder
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.streams.config import Settings

__all__ = ["soak"]

_MB = 1024 * 1024


def soak(options: Options) -> RunResult:
    count, subjects = options.sized(1_000_000, 10_000)
    config = WorkloadConfig(
        subjects=subjects,
        count=count,
        seed=options.seed,
        subject_prefix=f"b{uuid.uuid4().hex[:6]}",
        free_text_rate=0.0,
    )
    probes = _probes(config, 40)
    embedder = _embedder(options.settings)
    with Bench(options.settings, options.workdir, options.partitions) as bench:
        topic = bench.catalogue.candidates
        candidates = (w.candidate() for w in generate(config, SCHEMA))
        preload(bench, topic, candidates, count, progress=options.progress)
        worker = bench.worker(env=options.worker_env())
        worker.wait_healthy()
        sampler = RssSampler(worker.pid, every_s=1.0).start()
        try:
            follower = Follower(lambda: bench.committed_count(topic), [worker], every_s=2.0)
            follower.until(max(1, count // 50), options.deadline_s)
            early = _search_latency(bench, embedder, probes)
            follower.until(count, options.deadline_s)
            late = _search_latency(bench, embedder, probes)
        finally:
            sampler.stop()
    rss = sampler.samples
    second_half = [(t, b / _MB) for t, b in rss if t >= rss[-1][0] / 2] if rss else []
    if len(second_half) < 2:  # a short run: its last two samples are its second half
        second_half = [(t, b / _MB) for t, b in rss[-2:]]
    per_hour = slope(second_half) * 3600
    sustained = sustained_rate(follower.samples, count)
    return RunResult(
        [
            Figure("candidates", count, "records"),
            Figure("subjects", subjects, "subjects"),
            Figure("sustained throughput", sustained, "candidates/s"),
            Figure("overall throughput", overall_rate(follower.samples, count), "candidates/s"),
            Figure("worker RSS at 10 %", _rss_at(rss, 0.1) / _MB, "MB"),
            Figure("worker RSS at 50 %", _rss_at(rss, 0.5) / _MB, "MB"),
            Figure("worker RSS at end", _rss_at(rss, 1.0) / _MB, "MB"),
            Figure("worker RSS max", max((b for _, b in rss), default=0) / _MB, "MB"),
            Figure("RSS slope, second half", per_hour, "MB/hour"),
            Figure(
                "RSS slope, second half, per million",
                per_hour / 3600 / sustained * 1e6 if sustained else math.nan,
                "MB/1M candidates",
            ),
            Figure("Milvus search p50 at start", percentile(early, 50) * 1000, "ms"),
            Figure("Milvus search p99 at start", percentile(early, 99) * 1000, "ms"),
            Figure("Milvus search p50 at end", percentile(late, 50) * 1000, "ms"),
            Figure("Milvus search p99 at end", percentile(late, 99) * 1000, "ms"),
            Figure(
                "Milvus search p99 end / start",
                percentile(late, 99) / percentile(early, 99),
                "ratio",
            ),
        ],
        {"progress": follower.samples, "rss": rss, "search_start_s": early, "search_end_s": late},
    )


def _rss_at(samples: Sequence[tuple[float, int]], fraction: float) -> float:
    if not samples:
        return math.nan
    at = samples[-1][0] * fraction
    return float(next((b for t, b in samples if t >= at), samples[-1][1]))


def _probes(config: WorkloadConfig, n: int) -> list[tuple[str, str]]:
    """``(subject, fact text)`` pairs to search with: one per subject, subjects spread out."""
    rng = random.Random(config.seed)
    sample = replace(config, count=min(config.count, 5 * n))
    writes = list(generate(sample, SCHEMA))
    return [(w.subject_id, w.fact_text) for w in rng.sample(writes, min(n, len(writes)))]


def _embedder(settings: Settings) -> Embedder:
    from slotwise.models.embedders import (  # noqa: PLC0415 -- loads the model: soak only
        DEFAULT_EMBEDDER,
        embedder_named,
    )

    # The bench's store is new: its worker embeds with the setting, else a new store's default.
    return embedder_named(settings.embedder or DEFAULT_EMBEDDER)


def _search_latency(
    bench: Bench, embedder: Embedder, probes: Sequence[tuple[str, str]]
) -> list[float]:
    """Seconds per ``nearest`` call, each probe once; query vectors embedded beforehand."""
    embedder.embed([text for _, text in probes])  # warm the cache: time the search only

    async def measure() -> list[float]:
        index = MilvusIndex(
            bench.settings.milvus_uri,
            embedder,
            alias=bench.milvus_alias,
            prefix=bench.milvus_prefix,
        )
        await index.setup()
        try:
            timings = []
            for subject, text in probes:
                started = time.perf_counter()
                await index.nearest(subject, text, k=5, floor=0.15)
                timings.append(time.perf_counter() - started)
            return timings
        finally:
            await index.close()

    return asyncio.run(measure())
