"""The checkpoint releases the ledgers, flushes the sinks, then commits; a failed flush aborts;
a store gone back refuses the commit and hands the partitions to the recovery."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pytest
from confluent_kafka import TopicPartition

from slotwise.streams.runtime.checkpoint import Checkpoint
from slotwise.streams.runtime.health import Health
from slotwise.streams.runtime.recovery import Recovery
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


def checkpoint(
    log: Recorder,
    sink: FlakySink,
    health: Health | None = None,
    *,
    marks: RecordedMarks | None = None,
    recovery: Recovery | None = None,
) -> Checkpoint:
    return Checkpoint(
        FakePublisher(log),
        {"milvus": sink},
        health or Health(),
        recovery or Recovery("cands"),
        group_metadata=lambda: None,
        marks=marks,
    )


@dataclass
class Server:
    """The store's server identity: a failover moves its generation on."""

    generation: int = 0
    accepted: int = 0

    def accept(self) -> None:
        self.accepted = self.generation


def watching(server: Server) -> Recovery:
    return Recovery("cands", server=server)


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


def test_a_change_of_store_server_refuses_the_commit_and_hands_every_partition_back() -> None:
    log = Recorder()
    server = Server()
    recovery = watching(server)
    point = checkpoint(log, FlakySink(log), recovery=recovery)

    async def scenario() -> None:
        point.take({TP0, TP1})
        for tp, value in ((TP0, "a"), (TP1, "b")):
            point.ledgers[tp].track(0)
            point.ledgers[tp].complete(0, (message(value),))
        server.generation = 1  # a failover: the applies of "a" and "b" may be gone
        assert not await point.commit()
        assert recovery.rewinding == {TP0, TP1}
        assert point.ledgers == {}
        assert await point.commit()  # nothing left to commit: the events replay
        point.take({TP0, TP1})
        recovery.take({TP0, TP1}, {})
        assert recovery.rewinding == set()
        point.ledgers[TP0].track(0)
        point.ledgers[TP0].complete(0, (message("a"),))
        await point.commit()  # the same server since the change: it commits

    asyncio.run(scenario())
    assert log.commits == [([b"a"], {TP0: 1})]


def test_a_rewound_partition_heals_up_to_where_it_had_been_taken() -> None:
    log = Recorder()
    server = Server()
    recovery = watching(server)
    point = checkpoint(log, FlakySink(log), recovery=recovery)

    async def scenario() -> None:
        point.take({TP0, TP1})
        recovery.take({TP0, TP1}, {})
        for offset in (0, 1, 2):
            point.ledgers[TP0].track(offset)
            point.ledgers[TP0].complete(offset, (message(str(offset)),))
        await point.commit()  # 0..2 committed on the first server
        for offset in (3, 4):
            point.ledgers[TP0].track(offset)
        point.ledgers[TP0].complete(3, (message("3"),))
        server.generation = 1  # 3 applied, 4 running: either may be lost with the server
        assert not await point.commit()
        point.take({TP0, TP1})
        recovery.take({TP0, TP1}, {})
        ledger = point.ledgers[TP0]
        assert [recovery.replays(TP0, o) for o in (3, 4, 5)] == [True, True, False]
        assert not recovery.replays(TP1, 0)  # nothing of it ran on the first server
        server.generation = 2  # again, in the middle of the replay: the bound holds
        ledger.track(3)
        assert not await point.commit()
        point.take({TP0})
        recovery.take({TP0}, {})
        assert recovery.replays(TP0, 4) and not recovery.replays(TP0, 5)

    asyncio.run(scenario())


def test_a_change_of_store_server_is_due_even_with_no_partition_owned() -> None:
    """A standby replica must still accept the new server, or the partitions it takes
    later would be fenced from every apply."""
    log = Recorder()
    server = Server()
    recovery = watching(server)
    point = checkpoint(log, FlakySink(log), recovery=recovery)

    async def scenario() -> None:
        assert await point.commit()
        assert not recovery.rewind_due
        server.generation = 1
        assert not await point.commit()
        assert recovery.rewind_due and recovery.rewinding == set()
        recovery.rewound()
        assert not recovery.rewind_due
        assert await point.commit()  # the same server since: nothing to refuse

    asyncio.run(scenario())
    assert server.accepted == 1


def test_an_idle_checkpoint_probes_the_store_and_sees_it_changed() -> None:
    """No traffic, so no connection would notice a restarted Redis: the probe does."""
    log = Recorder()
    server = Server()
    recovery = watching(server)
    marks = RecordedMarks(on_probe=lambda: setattr(server, "generation", 1))
    point = checkpoint(log, FlakySink(log), marks=marks, recovery=recovery)

    async def scenario() -> None:
        point.take({TP0})
        # Nothing to commit; the probe reconnects to a new server.
        assert not await point.commit()
        assert recovery.rewinding == {TP0}
        assert await point.commit()  # within the second: no second probe

    asyncio.run(scenario())
    assert marks.probes == 1


def test_a_replay_below_the_earlier_commit_moves_the_mark_but_not_the_group_offset() -> None:
    log = Recorder()
    marks = RecordedMarks()
    point = checkpoint(log, FlakySink(log), marks=marks)

    async def scenario() -> None:
        point.take({TP0}, quiet_below={TP0: 12})  # the store holds 10, 12 were committed
        ledger = point.ledgers[TP0]
        for offset in (10, 11, 12):
            ledger.track(offset)
        ledger.complete(10, (message("replayed"),))
        await point.commit()
        ledger.complete(11, (message("replayed"),))
        ledger.complete(12, (message("new"),))
        await point.commit()

    asyncio.run(scenario())
    assert marks.recorded == [{TP0: 11}, {TP0: 13}]
    # 11 < 12: no transaction at all; then only the event past the earlier commit.
    assert log.commits == [([b"new"], {TP0: 13})]
    assert point.committed == {TP0: 13}


def test_marks_gone_back_refuse_the_commit_and_hand_every_partition_back() -> None:
    log = Recorder()
    marks = RecordedMarks()
    recovery = Recovery("cands")
    point = checkpoint(log, FlakySink(log), marks=marks, recovery=recovery)

    async def scenario() -> None:
        point.take({TP0, TP1})
        point.ledgers[TP0].track(0)
        point.ledgers[TP0].complete(0, (message("a"),))
        await point.commit()
        point.ledgers[TP0].track(1)
        point.ledgers[TP0].complete(1, (message("b"),))
        marks.behind = {TP0}  # the store restarted short of the first commit's mark
        assert not await point.commit()

    asyncio.run(scenario())
    assert marks.last == [{}, {TP0: 1}]  # the second record compared with the first
    assert log.commits == [([b"a"], {TP0: 1})]
    assert recovery.rewinding == {TP0, TP1}


@dataclass
class RecordedMarks:
    recorded: list[dict[tuple[str, int], int]] = field(default_factory=list)
    last: list[dict[tuple[str, int], int]] = field(default_factory=list)
    behind: set[tuple[str, int]] = field(default_factory=set)
    probes: int = 0
    on_probe: Callable[[], None] = lambda: None

    async def probe(self) -> None:
        self.probes += 1
        self.on_probe()

    async def record(
        self,
        offsets: Mapping[tuple[str, int], int],
        last: Mapping[tuple[str, int], int] | None = None,
    ) -> set[tuple[str, int]]:
        self.last.append(dict(last or {}))
        if self.behind:
            return self.behind
        self.recorded.append(dict(offsets))
        return set()
