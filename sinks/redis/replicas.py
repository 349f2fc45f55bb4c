"""Commit only what a replica holds: ``WAIT`` before each Kafka commit.

Redis replicates asynchronously, so a failover can promote a replica that lacks
the primary's last acknowledged writes. If the worker had already committed
those events' Kafka transaction, their outputs and offsets are published while
the store no longer holds their effects. :class:`ReplicaAck` is a checkpoint
sink (``streams/runtime/checkpoint.py``): its ``flush`` returns only once
``min_replicas`` replicas acknowledged every write made so far, and raises
:class:`ReplicasBehind` otherwise, which aborts the commit; the same batch is
tried again, so the partitions wait and nothing is published on a write a
replica might not have. One round trip per commit, never per event.

``WAIT`` waits for the *calling connection's* last write to replicate, and the
worker's writes are spread over a pool. So the call first makes a write of its
own on the connection it waits on (a counter under the deployment's prefix):
the replication stream is one ordered stream, so once that write is on a
replica, every write the primary acknowledged before it is too. Both go in one
pipeline, on one connection, in one round trip.
"""

from __future__ import annotations

import time

import redis.asyncio as aioredis
from prometheus_client import Counter, Histogram

from slotwise.sinks.exceptions import StoreUnavailable
from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import KeyLayout

__all__ = ["REPLICA_WAITS", "REPLICA_WAIT_SECONDS", "ReplicaAck", "ReplicasBehind"]

REPLICA_WAITS = Counter(
    "slotwise_redis_replica_waits_total",
    "WAITs before a Kafka commit, by outcome (acked, behind: the commit was held)",
    ["outcome"],
)
REPLICA_WAIT_SECONDS = Histogram(
    "slotwise_redis_replica_wait_seconds",
    "Time a commit waited for Redis replicas to acknowledge its writes",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)


class ReplicasBehind(StoreUnavailable):
    """Fewer replicas than required acknowledged the writes in time; carries both counts."""

    def __init__(self, message: str, *, acked: int, required: int) -> None:
        super().__init__(message)
        self.acked = acked
        self.required = required


class ReplicaAck:
    """A checkpoint sink that holds the commit until ``min_replicas`` replicas have the writes."""

    def __init__(
        self, client: aioredis.Redis, *, prefix: str, min_replicas: int, timeout_ms: int
    ) -> None:
        if min_replicas < 1 or timeout_ms < 1:
            raise ValueError("min_replicas and timeout_ms must be at least 1")
        self._redis = client
        self._marker = KeyLayout(prefix).replica_ack
        self._min_replicas = min_replicas
        self._timeout_ms = timeout_ms

    async def flush(self) -> None:
        started = time.perf_counter()
        with translated("waiting for replicas"):
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.incr(self._marker)
                pipe.wait(self._min_replicas, self._timeout_ms)
                _, acked = await pipe.execute()
        REPLICA_WAIT_SECONDS.observe(time.perf_counter() - started)
        if int(acked) < self._min_replicas:
            REPLICA_WAITS.labels("behind").inc()
            raise ReplicasBehind(
                f"{acked} of {self._min_replicas} Redis replicas acknowledged the writes "
                f"within {self._timeout_ms} ms; the commit waits",
                acked=int(acked),
                required=self._min_replicas,
            )
        REPLICA_WAITS.labels("acked").inc()
