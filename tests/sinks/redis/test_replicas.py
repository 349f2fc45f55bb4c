"""WAIT before commit, against a real primary and replica started here (``ReplicatedRedis``).

The replica is frozen with SIGSTOP, as a hung host: its connection stays open, so
the primary still counts it as connected, and only ``WAIT`` tells the difference.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from confluent_kafka import TopicPartition

from slotwise.sinks.redis.replicas import ReplicaAck, ReplicasBehind
from slotwise.streams.dev.replicated_redis import ReplicatedRedis
from slotwise.streams.runtime.checkpoint import Checkpoint
from slotwise.streams.runtime.health import Health
from slotwise.streams.runtime.recovery import Recovery
from slotwise.topics.outbound import Outbound

pytestmark = pytest.mark.redis

TP = ("cands", 0)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[ReplicatedRedis]:
    with ReplicatedRedis(tmp_path, replicas=1) as nodes:
        yield nodes


class Publisher:
    def __init__(self) -> None:
        self.commits: list[dict[tuple[str, int], int]] = []

    def init(self) -> None: ...

    def renew(self) -> None: ...

    def close(self) -> None: ...

    def commit(
        self, messages: Sequence[Outbound], offsets: Sequence[TopicPartition], group: object
    ) -> None:
        self.commits.append({(tp.topic, tp.partition): tp.offset for tp in offsets})


def failing(health: Health) -> object:
    return health.report()[1]["failing"]


def test_a_commit_waits_for_the_replica_and_is_held_while_it_lags(
    pair: ReplicatedRedis,
) -> None:
    async def scenario() -> None:
        # The writes and the WAIT on different connections, as in the worker's pool.
        writer = aioredis.from_url(pair.primary.url)
        waiter = aioredis.from_url(pair.primary.url)
        publisher = Publisher()
        health = Health(grace_s=0)
        ack = ReplicaAck(waiter, prefix="swtest", min_replicas=1, timeout_ms=300)
        point = Checkpoint(
            publisher, {"redis": ack}, health, Recovery("cands"), group_metadata=lambda: None
        )
        point.take({TP})
        try:
            await writer.set("swtest:a", "1")
            point.ledgers[TP].track(0)
            point.ledgers[TP].complete(0, ())
            await point.commit()
            assert publisher.commits == [{TP: 1}]

            pair.replicas[0].pause()
            await writer.set("swtest:b", "2")
            point.ledgers[TP].track(1)
            point.ledgers[TP].complete(1, ())
            started = time.monotonic()
            with pytest.raises(ReplicasBehind) as behind:
                await point.commit()
            assert time.monotonic() - started >= 0.25  # it waited the timeout out
            assert (behind.value.acked, behind.value.required) == (0, 1)
            assert publisher.commits == [{TP: 1}]  # nothing published on an unreplicated write
            assert "redis" in failing(health)

            pair.replicas[0].resume()
            await point.commit()  # the same batch, once the replica has it
            assert publisher.commits == [{TP: 1}, {TP: 2}]
            assert failing(health) == {}
            replica = aioredis.from_url(pair.replicas[0].url)
            assert await replica.get("swtest:b") == b"2"
            await replica.aclose()
        finally:
            pair.replicas[0].resume()
            await writer.aclose()
            await waiter.aclose()

    asyncio.run(scenario())


def test_without_a_replica_no_commit_passes(tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        client = aioredis.from_url(url)
        try:
            with pytest.raises(ReplicasBehind):
                await ReplicaAck(client, prefix="swtest", min_replicas=1, timeout_ms=50).flush()
        finally:
            await client.aclose()

    with ReplicatedRedis(tmp_path, replicas=0) as alone:
        asyncio.run(scenario(alone.primary.url))
