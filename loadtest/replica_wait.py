"""What waiting for a Redis replica costs a commit, on a local primary + replica.

    python -m slotwise.loadtest.replica_wait --commits 2000
    python -m slotwise.loadtest.replica_wait --hold     # keep the pair up for `exact` runs

It starts a throwaway primary and replica (``streams/dev/replicated_redis.py``) and
times :class:`~slotwise.sinks.redis.replicas.ReplicaAck` — the marker write
and ``WAIT 1`` the checkpoint makes once per commit — after a write of the
size of one applied event, ``--commits`` times; it prints p50, p99 and max.
With ``--hold`` it then prints the primary's URL and keeps the pair up until
interrupted, so the ``exact`` scenario can run against it back to back with
``SLOTWISE_REDIS_MIN_REPLICAS=1`` and ``0`` (README, "When the state store fails").
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import redis.asyncio as aioredis

from slotwise.sinks.redis.replicas import ReplicaAck
from slotwise.streams.dev.replicated_redis import ReplicatedRedis

__all__ = ["main", "wait_cost"]

_PREFIX = "bench-replica-wait"


async def wait_cost(url: str, commits: int) -> list[float]:
    """Milliseconds each of ``commits`` replica acknowledgements took, sorted."""
    writer, waiter = aioredis.from_url(url), aioredis.from_url(url)
    ack = ReplicaAck(waiter, prefix=_PREFIX, min_replicas=1, timeout_ms=1000)
    took: list[float] = []
    try:
        for i in range(commits):
            await writer.set(f"{_PREFIX}:k{i % 50}", "x" * 2000)  # about one event's outputs
            started = time.perf_counter()
            await ack.flush()
            took.append((time.perf_counter() - started) * 1000)
    finally:
        await writer.aclose()
        await waiter.aclose()
    return sorted(took)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m slotwise.loadtest.replica_wait")
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--hold", action="store_true", help="keep the pair up afterwards")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as root, ReplicatedRedis(Path(root)) as pair:
        took = asyncio.run(wait_cost(pair.primary.url, args.commits))
        p50, p99 = took[len(took) // 2], took[min(len(took) - 1, len(took) * 99 // 100)]
        print(f"WAIT 1 per commit over {len(took)} commits: p50 {p50:.3f} ms, "
              f"p99 {p99:.3f} ms, max {took[-1]:.3f} ms")  # fmt: skip
        if args.hold:
            print(f"SLOTWISE_REDIS_URL={pair.primary.url}  (Ctrl-C stops the pair)", flush=True)
            try:
                while True:
                    time.sleep(1)
            except KeyboardInterrupt:
                pass


if __name__ == "__main__":
    main()
