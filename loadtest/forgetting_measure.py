"""What the forgetting benchmark measures on a deployment: tiers, memory, latency.

Split from ``forgetting.py`` (which builds the world and runs the pass) so each
stays readable; nothing here changes the store it measures — the timing reads go
through an access hook writing under a scratch prefix, since a read counts as an
access and would otherwise keep every fact it returned alive.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

import redis

from slotwise.loadtest.runner import Bench
from slotwise.processors.ports import Embedder
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.milvus.tiers import MilvusTiers
from slotwise.sinks.redis.access import AccessHook, RedisAccess
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import Reads

__all__ = [
    "compacted_copy",
    "flush_milvus",
    "index_of",
    "interleaved_search",
    "measure",
    "percentile",
    "redis_memory",
]


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def index_of(
    bench: Bench, embedder: Embedder, *, flush_every: int = 250, alias: str | None = None
) -> MilvusIndex:
    return MilvusIndex(
        bench.settings.milvus_uri,
        embedder,
        alias=alias or bench.milvus_alias,
        prefix=bench.milvus_prefix,
        flush_every=flush_every,
    )


def _token(bench: Bench) -> str:
    token = bench.settings.milvus_token
    return token.get_secret_value() if token else ""


def flush_milvus(bench: Bench) -> None:
    from pymilvus import MilvusClient  # noqa: PLC0415

    client = MilvusClient(uri=bench.settings.milvus_uri, token=_token(bench))
    try:
        for name in client.list_collections():
            if name.startswith(f"{bench.milvus_prefix}_"):
                client.flush(name)
    finally:
        client.close()


def redis_memory(settings: Settings, prefix: str) -> tuple[int, int]:
    """Bytes of every key of the deployment, and of its stored outputs (``applied``)."""
    client = redis.Redis.from_url(settings.redis_url)
    total = outputs = 0
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=5_000))
        for first in range(0, len(keys), 1_000):
            chunk = keys[first : first + 1_000]
            pipe = client.pipeline(transaction=False)
            for key in chunk:
                pipe.memory_usage(key, samples=0)
            for key, size in zip(chunk, pipe.execute(), strict=True):
                total += int(size or 0)
                outputs += int(size or 0) if key.endswith(b":applied") else 0
    finally:
        client.close()
    return total, outputs


def compacted_copy(bench: Bench, sources: Sequence[str], label: str) -> str:
    """A fresh collection holding the rows of ``sources`` (collections or aliases), behind
    an alias of its own: a tier as a Milvus server leaves it once it has compacted away
    deleted rows (Milvus Lite never does for collections this small, and its manual
    compaction is a no-op). The copies of the tier before and after a pass are what an
    interleaved comparison searches."""
    from pymilvus import MilvusClient  # noqa: PLC0415

    from slotwise.sinks.milvus.collections import FIELDS, create_collection  # noqa: PLC0415

    client = MilvusClient(uri=bench.settings.milvus_uri, token=_token(bench))
    name, alias = f"{bench.milvus_prefix}_{label}", f"{bench.milvus_prefix}_{label}_current"
    try:
        aliases = client.list_aliases().get("aliases", [])
        named = [
            str(client.describe_alias(s)["collection_name"]) if s in aliases else s for s in sources
        ]
        described = client.describe_collection(named[0])
        dim = next(f["params"]["dim"] for f in described["fields"] if f["name"] == "vector")
        create_collection(client, name, model="all-MiniLM-L6-v2", dimension=int(dim), timeout_s=60)
        for source in named:
            client.load_collection(source)
            iterator = client.query_iterator(
                source, batch_size=1_000, output_fields=[*FIELDS, "vector"]
            )
            while rows := iterator.next():
                client.insert(name, [dict(r) for r in rows])
            iterator.close()
        client.flush(name)
        client.create_alias(name, alias)
    finally:
        client.close()
    return alias


async def interleaved_search(
    bench: Bench,
    embedder: Embedder,
    probes: Sequence[tuple[str, str]],
    aliases: dict[str, str],
    *,
    rounds: int = 4,
) -> dict[str, dict[str, float]]:
    """Search latency of each aliased collection, the collections taking turns round after
    round, so a change in the machine's load falls on all of them alike."""
    embedder.embed([text for _, text in probes])
    indexes = {label: index_of(bench, embedder, alias=alias) for label, alias in aliases.items()}
    for index in indexes.values():
        await index.setup()
    found: dict[str, list[list[float]]] = {label: [] for label in indexes}
    try:
        labels = list(indexes)
        for turn in range(rounds):
            for label in labels[turn % len(labels) :] + labels[: turn % len(labels)]:
                timings = []
                for subject, text in probes:
                    started = time.perf_counter()
                    await indexes[label].nearest(subject, text, k=5, floor=0.15)
                    timings.append(time.perf_counter() - started)
                found[label].append(timings)
    finally:
        for index in indexes.values():
            await index.close()
    return {
        label: {
            "p50_ms": statistics.median(percentile(r, 0.5) for r in runs) * 1000,
            "p99_ms": statistics.median(percentile(r, 0.99) for r in runs) * 1000,
        }
        for label, runs in found.items()
    }


async def measure(
    bench: Bench,
    embedder: Embedder,
    probes: Sequence[tuple[str, str]],
    subjects: Sequence[str],
    *,
    alias: str | None = None,
) -> dict[str, float]:
    embedder.embed([text for _, text in probes])  # warm: time the search only
    index = index_of(bench, embedder, alias=alias)
    await index.setup()
    tiers = MilvusTiers(index, embedder, uri=bench.settings.milvus_uri)
    store = RedisStore.from_url(bench.settings.redis_url, prefix=bench.redis_prefix)
    try:
        counts = await tiers.counts()
        # Three rounds over the probes, the median round kept: the machine is shared.
        rounds: list[list[float]] = []
        for _ in range(3):
            searches = []
            for subject, text in probes:
                started = time.perf_counter()
                await index.nearest(subject, text, k=5, floor=0.15)
                searches.append(time.perf_counter() - started)
            rounds.append(searches)
        # The hook writes under a scratch prefix: these timing reads must not count as the
        # store's accesses (they would keep every fact they return alive).
        scratch = RedisStore.from_url(
            bench.settings.redis_url, prefix=f"{bench.redis_prefix}-scratch"
        )
        hook = AccessHook(RedisAccess(scratch))
        reads: dict[str, list[float]] = {"plain": [], "hooked": []}
        sides = {"plain": Reads(store), "hooked": Reads(store, on_read=hook)}
        for turn, subject in enumerate(subjects):  # alternating, so load drift falls on both
            for name in ("plain", "hooked") if turn % 2 else ("hooked", "plain"):
                started = time.perf_counter()
                await sides[name].facts(subject, via="bench")
                reads[name].append(time.perf_counter() - started)
        await hook.drain()
        doomed = [
            k async for k in scratch.client.scan_iter(match=f"{bench.redis_prefix}-scratch:*")
        ]
        if doomed:
            await scratch.client.delete(*doomed)
        await scratch.close()
    finally:
        await tiers.close()
        await index.close()
        await store.close()
    memory, outputs = redis_memory(bench.settings, bench.redis_prefix)
    return {
        "hot_rows": counts["hot"],
        "cold_rows": counts["cold"],
        "redis_mb": memory / 1e6,
        "redis_outputs_mb": outputs / 1e6,
        "redis_without_outputs_mb": (memory - outputs) / 1e6,
        "search_p50_ms": statistics.median(percentile(r, 0.5) for r in rounds) * 1000,
        "search_p99_ms": statistics.median(percentile(r, 0.99) for r in rounds) * 1000,
        "read_p50_ms": percentile(reads["plain"], 0.5) * 1000,
        "read_hooked_p50_ms": percentile(reads["hooked"], 0.5) * 1000,
        "read_p99_ms": percentile(reads["plain"], 0.99) * 1000,
        "read_hooked_p99_ms": percentile(reads["hooked"], 0.99) * 1000,
    }
