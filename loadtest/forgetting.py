"""The forgetting benchmark: storage, hot-tier latency and hit rate before and after a pass.

    python -m slotwise.loadtest.forgetting --facts 100000 --subjects 2000

1. **The store** (``forgetting_store.py``): the loadtest generator's writes over
   two years, resolved in-process by the worker's cascade, loaded in bulk —
   Redis through ``RedisStore.apply`` (one event per subject), Milvus through
   ``MilvusIndex.add``/``flush`` with the worker's MiniLM embedder — because
   100,000 facts through the worker would take most of an hour on two cores.
2. **The reads before the pass** become the access counters, written through
   ``RedisAccess.record_many`` as the read side's hook writes them.
3. **Before**: hot-tier rows, the deployment's Redis memory (``MEMORY USAGE`` of
   every key), hot-tier search latency (``MilvusIndex.nearest``, query vectors
   embedded beforehand so only the search is timed), and the latency of
   ``Reads.facts`` with and without the access hook.
4. **The pass runs through a worker**: ``forget`` commands for every subject on
   the candidates topic, timed until every one is applied.
5. **After**: the same figures, plus the share of the reads of the next
   ``horizon_days`` whose facts were still hot (and of the distinct facts read).
6. **Compacted copies, taking turns**: Milvus Lite never compacts the deleted
   rows of a collection this small, so the live hot tier after a pass still
   scans them. The tier before (hot and cold rows together) and after (the hot
   rows) are copied into fresh collections, as a server leaves them once it has
   compacted, and searched in alternating rounds, so a change in the machine's
   load falls on both alike: the latency figure to quote.

A threshold sweep (the pure selection, no worker) shows the trade-off around
the threshold the pass ran with. Results print as a table and go to
``<json-dir>/forgetting.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import pickle
import random
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from slotwise.loadtest.forgetting_measure import (
    compacted_copy,
    flush_milvus,
    index_of,
    interleaved_search,
    measure,
)
from slotwise.loadtest.forgetting_store import (
    FREE_TEXT_HALF_LIVES,
    Read,
    WorldConfig,
    build_store,
    reads_of,
)
from slotwise.loadtest.runner import Bench
from slotwise.processors.forgetting import Access, ForgetPolicy, HalfLives, select_archived
from slotwise.processors.model import VectorRow
from slotwise.processors.ports import Embedder
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.milvus.collections import cold_collection_name
from slotwise.sinks.redis.access import RedisAccess
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import Settings
from slotwise.streams.passes.forget import forget_commands, publish_commands, wait_applied
from slotwise.topics.records import Fact

__all__ = ["main", "run"]

_console = Console()
SCHEMA = AttributeSchema.load()
SWEEP = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4)


def _accesses(reads: Sequence[Read], end: datetime) -> dict[str, dict[str, tuple[int, datetime]]]:
    found: dict[str, dict[str, tuple[int, datetime]]] = {}
    for read in reads:
        if read.at > end:
            continue
        own = found.setdefault(read.subject_id, {})
        count, last = own.get(read.fact_id, (0, read.at))
        own[read.fact_id] = (count + 1, max(last, read.at))
    return found


async def _load(bench: Bench, embedder: Embedder, facts: Sequence[Fact], accesses: Any) -> None:
    store = RedisStore.from_url(bench.settings.redis_url, prefix=bench.redis_prefix)
    index = index_of(bench, embedder, flush_every=5_000)
    await index.setup()
    try:
        by_subject: dict[str, list[Fact]] = {}
        for fact in facts:
            by_subject.setdefault(fact.subject_id, []).append(fact)
        for subject, own in by_subject.items():
            outcome = await store.apply(
                subject,
                "bulk-load",
                expected_version=0,
                facts=own,
                outputs=b"{}",
                now=own[0].recorded_at,
            )
            if outcome.stale:
                raise RuntimeError(f"{subject} was not empty")
        rows = [
            VectorRow(f.fact_id, f.subject_id, f.text, f.category)
            for f in facts
            if f.status != "history"
        ]
        for first in range(0, len(rows), 2_000):
            index.add(rows[first : first + 2_000])
            await index.flush()
        subjects = list(accesses)
        access = RedisAccess(store)
        for first in range(0, len(subjects), 200):
            await access.record_many({s: accesses[s] for s in subjects[first : first + 200]})
    finally:
        await index.close()
        await store.close()
    flush_milvus(bench)


def _hit_rate(after: Sequence[Read], archived: set[str]) -> tuple[float, float]:
    if not after:
        return float("nan"), float("nan")
    per_read = sum(1 for r in after if r.fact_id not in archived) / len(after)
    distinct = {r.fact_id for r in after}
    return per_read, sum(1 for f in distinct if f not in archived) / len(distinct)


def _sweep(
    facts: Sequence[Fact], reads: Sequence[Read], end: datetime, policy: ForgetPolicy
) -> list[dict[str, float]]:
    half_lives = HalfLives.of(SCHEMA, overrides=FREE_TEXT_HALF_LIVES)
    accesses = {
        fact_id: Access(count, last)
        for own in _accesses(reads, end).values()
        for fact_id, (count, last) in own.items()
    }
    by_subject: dict[str, list[Fact]] = {}
    for fact in facts:
        by_subject.setdefault(fact.subject_id, []).append(fact)
    after = [r for r in reads if r.at > end]
    closed = sum(1 for f in facts if f.status in ("superseded", "history"))
    hot = sum(1 for f in facts if f.status != "history")
    rows = []
    for threshold in SWEEP:
        chosen = ForgetPolicy(threshold=threshold, budget=policy.budget, delta=policy.delta)
        archived = {
            s.fact.fact_id
            for own in by_subject.values()
            for s in select_archived(
                own, accesses, as_of=end, policy=chosen, half_lives=half_lives
            ).archived
        }
        per_read, distinct = _hit_rate(after, archived)
        rows.append(
            {
                "threshold": threshold,
                "archived": len(archived),
                "hot_reduction": (len(archived) + closed) / hot,
                "hit_rate": per_read,
                "distinct_hit_rate": distinct,
            }
        )
    return rows


def _world(config: WorldConfig, cache_dir: Path) -> tuple[datetime, list[Fact], list[Read]]:
    """The store and its reads, built once per configuration and kept in ``cache_dir``
    (building 100,000 facts takes minutes); times are relative to the build's ``end``."""
    name = f"slotwise-forgetting-{config.facts}-{config.subjects}-{config.seed}.pickle"
    path = cache_dir / name
    if path.exists():
        with path.open("rb") as cached:
            end, facts, reads = pickle.load(cached)
        return end, facts, reads
    end = datetime.now(UTC)
    facts = build_store(config, SCHEMA, end=end)
    reads = list(reads_of(facts, config, SCHEMA, end=end))
    with path.open("wb") as out:
        pickle.dump((end, facts, reads), out)
    return end, facts, reads


def run(config: WorldConfig, policy: ForgetPolicy, workdir: Path, json_dir: Path) -> dict[str, Any]:
    from slotwise.models.embedders import (  # noqa: PLC0415 - loads the model
        DEFAULT_EMBEDDER,
        embedder_named,
    )

    settings = Settings()
    started = time.monotonic()
    end, facts, reads = _world(config, Path(tempfile.gettempdir()))
    _console.log(
        f"world: {len(facts)} facts, {len(reads)} reads in {time.monotonic() - started:.0f} s"
    )
    rng = random.Random(config.seed)
    current = [f for f in facts if f.status == "current"]
    probes = [(f.subject_id, f.text) for f in rng.sample(current, min(500, len(current)))]
    subjects = sorted({f.subject_id for f in facts})
    read_subjects = rng.sample(subjects, min(500, len(subjects)))
    env = {
        "SLOTWISE_FORGET_HALF_LIVES": json.dumps(FREE_TEXT_HALF_LIVES),
        "SLOTWISE_FORGET_THRESHOLD": str(policy.threshold),
    }
    # The bench's store is new: its worker embeds with the setting, else a new store's default.
    embedder = embedder_named(settings.embedder or DEFAULT_EMBEDDER)
    with Bench(settings, workdir) as bench:
        began = time.monotonic()
        asyncio.run(_load(bench, embedder, facts, _accesses(reads, end)))
        _console.log(f"loaded in {time.monotonic() - began:.0f} s")
        before = asyncio.run(measure(bench, embedder, probes, read_subjects))
        worker = bench.worker(env=env)
        worker.wait_healthy(300)
        commands = forget_commands(subjects, as_of=end, policy=policy)
        began = time.monotonic()
        publish_commands(bench.deployment, commands)

        async def waited() -> Any:
            store = RedisStore.from_url(bench.settings.redis_url, prefix=bench.redis_prefix)
            try:
                report = await wait_applied(store, commands, timeout_s=3600, started=began)
                archived = {
                    f.fact_id
                    for s in subjects
                    for f in await store.facts(s, include_history=True)
                    if f.status == "archived"
                }
                return report, archived
            finally:
                await store.close()

        report, archived = asyncio.run(waited())
        worker.stop(60)
        _console.log(f"pass: {report.applied}/{report.commands} in {report.seconds:.1f} s")
        flush_milvus(bench)
        time.sleep(30)  # Milvus Lite compacts and indexes after a flush, in the background
        after = asyncio.run(measure(bench, embedder, probes, read_subjects))
        tiers = {
            "before: every row (the hot tier before the pass)": compacted_copy(
                bench,
                [
                    bench.milvus_alias,
                    cold_collection_name(bench.milvus_prefix, embedder.model_name),
                ],
                "all",
            ),
            "after: the hot rows": compacted_copy(bench, [bench.milvus_alias], "hot"),
        }
        compacted = asyncio.run(interleaved_search(bench, embedder, probes, tiers))
    per_read, distinct = _hit_rate([r for r in reads if r.at > end], archived)
    result = {
        "config": {
            **dataclasses.asdict(config),
            "threshold": policy.threshold,
            "budget": policy.budget,
        },
        "facts": len(facts),
        "reads_before": sum(1 for r in reads if r.at <= end),
        "reads_after": sum(1 for r in reads if r.at > end),
        "pass_seconds": report.seconds,
        "pass_subjects": report.applied,
        "archived": len(archived),
        "before": before,
        "after": after,
        "after_compacted": compacted,
        "hit_rate": per_read,
        "distinct_hit_rate": distinct,
        "sweep": _sweep(facts, reads, end, policy),
    }
    json_dir.mkdir(parents=True, exist_ok=True)
    (json_dir / "forgetting.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    _show(result)
    return result


def _show(result: dict[str, Any]) -> None:
    before, after = result["before"], result["after"]
    table = Table(
        title=f"forgetting: {result['facts']:,} facts, "
        f"pass over {result['pass_subjects']:,} subjects"
    )
    for column in ("figure", "before", "after", "change"):
        table.add_column(column)

    def row(name: str, key: str, unit: str = "") -> None:
        a, b = before[key], after[key]
        change = f"{(b - a) / a:+.1%}" if a else "-"
        table.add_row(name, f"{a:,.1f}{unit}", f"{b:,.1f}{unit}", change)

    row("hot-tier rows", "hot_rows")
    row("cold-tier rows", "cold_rows")
    row("Redis memory (MB)", "redis_mb")
    row("Redis without stored outputs (MB)", "redis_without_outputs_mb")
    row("hot search p50", "search_p50_ms", " ms")
    row("hot search p99", "search_p99_ms", " ms")
    row("facts read p50, hook on", "read_hooked_p50_ms", " ms")
    _console.print(table)
    (a, first), (b, second) = result["after_compacted"].items()
    ab = Table(title="hot-tier search, compacted copies taking turns (median of 4 rounds)")
    for column in ("collection", "p50", "p99"):
        ab.add_column(column)
    for label, figures in ((a, first), (b, second)):
        ab.add_row(label, f"{figures['p50_ms']:,.1f} ms", f"{figures['p99_ms']:,.1f} ms")
    _console.print(ab)
    _console.print(
        f"pass: {result['archived']:,} archived in {result['pass_seconds']:.1f} s; "
        f"reads of the next days still hot: {result['hit_rate']:.3f} "
        f"({result['distinct_hit_rate']:.3f} of the distinct facts read); "
        f"facts read p50 without the hook {before['read_p50_ms']:.2f} ms"
    )
    sweep = Table(title="threshold sweep (pure selection, same store and reads)")
    for column in ("threshold", "archived", "hot rows saved", "reads still hot", "distinct"):
        sweep.add_column(column)
    for line in result["sweep"]:
        sweep.add_row(
            f"{line['threshold']:g}",
            f"{line['archived']:,}",
            f"{line['hot_reduction']:.1%}",
            f"{line['hit_rate']:.3f}",
            f"{line['distinct_hit_rate']:.3f}",
        )
    _console.print(sweep)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m slotwise.loadtest.forgetting")
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--subjects", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threshold", type=float, default=0.1)
    parser.add_argument("--budget", type=int, default=None)
    parser.add_argument("--json-dir", type=Path, default=Path("docs/results/forgetting"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    config = WorldConfig(facts=args.facts, subjects=args.subjects, seed=args.seed)
    policy = ForgetPolicy(threshold=args.threshold, budget=args.budget)
    with tempfile.TemporaryDirectory(prefix="slotwise-forgetting-") as workdir:
        run(config, policy, Path(workdir), args.json_dir)


if __name__ == "__main__":
    main()
