"""How often to flush Milvus: filtered-search latency while single rows are written.

    python -m slotwise.loadtest.milvus_flush --writes 3000 [--policies never,50,250,1000]

It talks to the Milvus the settings name (``SLOTWISE_MILVUS_URI``, with
``SLOTWISE_MILVUS_TOKEN`` on a secured server) unless ``--uri`` says otherwise.

For each flush policy, writes ``--writes`` rows one at a time through
:class:`sinks.milvus_index.MilvusIndex` (``add`` then ``flush``, as a worker
does per event), spread over ``--subjects`` subjects, and at evenly spaced
points times ``--searches`` subject-filtered searches. Vectors come from a
seeded random embedder of MiniLM's dimension, so the numbers are Milvus's
alone. Each policy writes its own collection, dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pymilvus import MilvusClient

from slotwise.processors.model import VectorRow
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.streams.config import Settings

__all__ = ["PolicyRun", "RandomEmbedder", "main", "measure"]

NEVER = 10**9


class RandomEmbedder:
    """A unit vector seeded by the text: stable, and free next to a model."""

    model_name = "bench-random-v1"

    def __init__(self, dimension: int = 384) -> None:
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            vector = np.random.default_rng(seed).standard_normal(self._dimension)
            rows.append((vector / np.linalg.norm(vector)).tolist())
        return rows


@dataclass(frozen=True, slots=True)
class PolicyRun:
    policy: str
    # (writes so far, median ms, p95 ms) at each checkpoint
    points: tuple[tuple[int, float, float], ...]
    writes_per_s: float


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def measure(
    uri: str,
    policy: int,
    *,
    token: str | None = None,
    writes: int,
    subjects: int,
    checkpoints: int,
    searches: int,
) -> PolicyRun:
    prefix = f"bench{uuid.uuid4().hex[:8]}"
    index = MilvusIndex(
        uri,
        RandomEmbedder(),
        token=token,
        alias=f"{prefix}_current",
        prefix=prefix,
        flush_every=policy,
    )
    await index.setup()
    every = max(1, writes // checkpoints)
    points: list[tuple[int, float, float]] = []
    writing = 0.0
    try:
        for n in range(1, writes + 1):
            row = VectorRow(f"f{n}", f"subject-{n % subjects}", f"fact number {n}", "bench")
            started = time.perf_counter()
            index.add([row])
            await index.flush()
            writing += time.perf_counter() - started
            if n % every == 0 or n == writes:
                samples = []
                for i in range(searches):
                    started = time.perf_counter()
                    await index.nearest(f"subject-{i % subjects}", f"query {i}", k=5, floor=-1.0)
                    samples.append((time.perf_counter() - started) * 1000)
                points.append((n, statistics.median(samples), _p95(samples)))
    finally:
        await index.close()
        _drop(uri, token, prefix)
    label = "never" if policy == NEVER else f"every {policy}"
    return PolicyRun(label, tuple(points), writes / writing)


def _drop(uri: str, token: str | None, prefix: str) -> None:
    client = MilvusClient(uri=uri, token=token or "")
    try:
        client.drop_alias(f"{prefix}_current")
        for name in client.list_collections():
            if name.startswith(f"{prefix}_"):
                client.drop_collection(name)
    finally:
        client.close()


def _table(runs: list[PolicyRun]) -> str:
    marks = [n for n, _, _ in runs[0].points]
    head = f"{'flush policy':<14}" + "".join(f"{f'@{n}':>14}" for n in marks) + f"{'writes/s':>10}"
    lines = [
        "filtered search, median / p95 ms, after N single-row upserts",
        head,
        "-" * len(head),
    ]
    for run in runs:
        cells = "".join(f"{f'{m:.1f} / {p:.1f}':>14}" for _, m, p in run.points)
        lines.append(f"{run.policy:<14}{cells}{run.writes_per_s:>10.0f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m slotwise.loadtest.milvus_flush", description=__doc__
    )
    settings = Settings()
    secret = settings.milvus_token
    parser.add_argument("--uri", default=settings.milvus_uri)
    parser.add_argument("--writes", type=int, default=3000)
    parser.add_argument("--subjects", type=int, default=100)
    parser.add_argument("--checkpoints", type=int, default=6)
    parser.add_argument("--searches", type=int, default=15)
    parser.add_argument("--policies", default="never,50,250,1000")
    args = parser.parse_args(argv)
    policies = [NEVER if p == "never" else int(p) for p in args.policies.split(",")]
    runs = [
        asyncio.run(
            measure(
                args.uri,
                policy,
                token=secret.get_secret_value() if secret else None,
                writes=args.writes,
                subjects=args.subjects,
                checkpoints=args.checkpoints,
                searches=args.searches,
            )
        )
        for policy in policies
    ]
    print(_table(runs))


if __name__ == "__main__":
    main()
