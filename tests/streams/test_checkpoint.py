"""The checkpoint releases the ledgers, flushes the sinks, then commits; a failed flush aborts."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from confluent_kafka import TopicPartition

from slotwise.streams.checkpoint import Checkpoint
from slotwise.streams.health import Health
from slotwise.topics.outbound import Outbound

TP0, TP1 = ("cands", 0), ("cands", 1)


@dataclass
class Recorder:
    steps: list[str] = field(default_factory=list)
    commits: list[tuple[list[bytes | None], dict[tuple[str, int], int]]] = field(
        default_factory=list
    )


@dataclass
class FakePublisher:
    log: Recorder

    def init(self) -> None: ...

    def renew(self) -> None: ...

    def close(self) -> None: ...

    def commit(
        self,
        messages: Sequence[Outbound],
        offsets: Sequence[TopicPartition],
        group_metadata: object,
    ) -> None:
        self.log.steps.append("commit")
        self.log.commits.append(
            ([m.value for m in messages], {(tp.topic, tp.partition): tp.offset for tp in offsets})
        )


@dataclass
class FlakySink:
    log: Recorder
    failures: int = 0

    async def flush(self) -> None:
        self.log.steps.append("flush")
        if self.failures:
            self.failures -= 1
            raise ConnectionError("milvus down")


def message(value: str) -> Outbound:
    return Outbound(topic="facts", key=b"k", value=value.encode())


def checkpoint(log: Recorder, sink: FlakySink, health: Health | None = None) -> Checkpoint:
    return Checkpoint(
        FakePublisher(log), {"milvus": sink}, health or Health(), group_metadata=lambda: None
    )


def test_finished_prefixes_commit_after_the_sinks_flush() -> None:
    log = Recorder()
    point = checkpoint(log, FlakySink(log))

    async def scenario() -> None:
        point.take({TP0, TP1})
        ledger = point.ledgers[TP0]
        for offset in (5, 6, 7):
            ledger.track(offset)
        ledger.complete(5, (message("a"),))
        ledger.complete(7, (message("c"),))  # 6 still running: 7 waits
        await point.commit()
        ledger.complete(6, (message("b"),))
        await point.commit()
        await point.commit()  # nothing new: no transaction

    asyncio.run(scenario())
    assert log.steps == ["flush", "commit", "flush", "commit"]
    assert log.commits == [([b"a"], {TP0: 6}), ([b"b", b"c"], {TP0: 8})]
    assert point.committed == {TP0: 8}


def test_a_failed_flush_aborts_the_commit_and_the_same_batch_goes_next() -> None:
    log = Recorder()
    health = Health(grace_s=0)
    health.started()
    point = checkpoint(log, FlakySink(log, failures=1), health)

    async def scenario() -> None:
        point.take({TP0})
        point.ledgers[TP0].track(0)
        point.ledgers[TP0].complete(0, (message("a"),))
        with pytest.raises(ConnectionError):
            await point.commit()
        assert not health.report()[0]
        await point.commit()

    asyncio.run(scenario())
    assert log.steps == ["flush", "flush", "commit"]
    assert log.commits == [([b"a"], {TP0: 1})]
    assert health.report()[0]


def test_a_released_partition_leaves_every_later_commit() -> None:
    log = Recorder()
    point = checkpoint(log, FlakySink(log, failures=1))

    async def scenario() -> None:
        point.take({TP0, TP1})
        for tp, value in ((TP0, "a"), (TP1, "b")):
            point.ledgers[tp].track(0)
            point.ledgers[tp].complete(0, (message(value),))
        with pytest.raises(ConnectionError):
            await point.commit()  # both batches queued, unpublished
        await point.release({TP1})
        await point.commit()

    asyncio.run(scenario())
    assert log.commits == [([b"a"], {TP0: 1})]
    assert set(point.ledgers) == {TP0}
