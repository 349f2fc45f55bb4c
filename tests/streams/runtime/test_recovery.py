"""Recovery: where taken partitions start, what a replay heals, and a change of server.

Against the in-memory broker and marks of ``streams/runtime/testing.py``; the
poll thread's calls run on a thread of their own, the store's on the event loop,
as in the worker.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import pytest
from confluent_kafka import TopicPartition

from slotwise.sinks.exceptions import StoreUnavailable
from slotwise.streams.runtime.offsets import PartitionLedger
from slotwise.streams.runtime.recovery import Recovery, Takeover
from slotwise.streams.runtime.testing import InMemoryMarks, InMemoryTopics, TestingConsumer

TOPIC = "cands"
TP0, TP1 = (TOPIC, 0), (TOPIC, 1)


def topics(records: int = 20) -> InMemoryTopics:
    broker = InMemoryTopics({TOPIC: 2})
    for p in (0, 1):
        for n in range(records):
            broker.produce(TOPIC, f"{p}-{n}".encode(), key=b"s", partition=p)
    return broker


def take(recovery: Recovery, consumer: TestingConsumer, how: str = "takeover") -> Takeover:
    """A takeover (or a ``retake``) as the worker makes it: off the event loop."""

    async def scenario() -> Takeover:
        recovery.start(asyncio.get_running_loop())
        partitions = [TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)]
        return await asyncio.to_thread(getattr(recovery, how), consumer, partitions)

    return asyncio.run(scenario())


def test_a_store_behind_the_committed_log_is_replayed_from_its_mark_quietly() -> None:
    broker = topics()
    broker.committed.update({TP0: 12, TP1: 15})
    marks = InMemoryMarks({TP0: 10, TP1: 15})  # the store lost offsets 10 and 11 of TP0

    takeover = take(Recovery(TOPIC, marks=marks), TestingConsumer(broker))

    assert takeover.starts == {TP0: 10, TP1: 15}
    assert takeover.quiet_below == {TP0: 12}  # the replayed 10 and 11 publish nothing


def test_a_store_new_to_the_group_takes_the_committed_offsets_as_its_marks() -> None:
    broker = topics()
    broker.committed.update({TP0: 12})
    marks = InMemoryMarks()

    takeover = take(Recovery(TOPIC, marks=marks), TestingConsumer(broker))

    assert takeover.starts == {TP0: 12, TP1: 0}  # TP1: no commit, the log's start
    assert takeover.quiet_below == {}
    assert marks.marks == {TP0: 12, TP1: 0}


def test_a_mark_missing_beside_the_groups_others_replays_from_the_logs_start() -> None:
    broker = topics()
    broker.truncate_before(TP0, 3)  # retention took the first three
    broker.committed.update({TP0: 12, TP1: 15})
    marks = InMemoryMarks({TP1: 15})  # TP0's first mark was lost with the writes after it

    takeover = take(Recovery(TOPIC, marks=marks), TestingConsumer(broker))

    assert takeover.starts == {TP0: 3, TP1: 15}
    assert takeover.quiet_below == {TP0: 12}


def test_after_a_change_of_server_even_an_unknown_group_replays_from_the_logs_start() -> None:
    broker = topics()
    broker.committed.update({TP0: 12, TP1: 15})

    takeover = take(Recovery(TOPIC, marks=InMemoryMarks()), TestingConsumer(broker), "retake")

    assert takeover.starts == {TP0: 0, TP1: 0}
    assert takeover.quiet_below == {TP0: 12, TP1: 15}


@dataclass
class FlakyMarks(InMemoryMarks):
    """Marks whose first reads fail, noting the thread each read ran on."""

    failures: int = 2
    threads: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__({TP0: 12, TP1: 15})

    async def read(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        self.threads.append(threading.current_thread().name)
        if self.failures:
            self.failures -= 1
            raise StoreUnavailable("redis restarting")
        return await super().read(partitions)


def test_an_outage_of_the_store_is_waited_out_on_the_event_loop() -> None:
    broker = topics()
    broker.committed.update({TP0: 12, TP1: 15})
    marks = FlakyMarks()

    takeover = take(Recovery(TOPIC, marks=marks, pause_s=lambda _: 0.001), TestingConsumer(broker))

    assert takeover.starts == {TP0: 12, TP1: 15}
    # Every read and every wait between them on the loop: the poll thread only waits.
    assert marks.threads == [threading.main_thread().name] * 3


def test_an_outage_past_the_budget_fails_the_takeover_loudly() -> None:
    broker = topics()
    broker.committed.update({TP0: 12})
    marks = FlakyMarks(failures=100)

    with pytest.raises(StoreUnavailable):
        take(Recovery(TOPIC, marks=marks, pause_s=lambda _: 0.001), TestingConsumer(broker))


def test_only_an_event_below_the_committed_offset_is_a_healing_replay() -> None:
    recovery = Recovery(TOPIC)
    recovery.take({TP0, TP1}, {TP0: 12})
    assert recovery.replays(TP0, 11)
    assert not recovery.replays(TP0, 12)
    assert not recovery.replays(TP1, 0)  # a fresh assignment replays nothing
    assert not recovery.replays((TOPIC, 7), 0)  # not owned


@dataclass
class Server:
    generation: int = 0

    def accept(self) -> None:
        pass


def test_events_taken_before_a_change_of_server_are_healing_replays() -> None:
    server = Server()
    recovery = Recovery(TOPIC, server=server)
    recovery.take({TP0}, {TP0: 12})
    ledger = PartitionLedger(start=12, quiet_below=12)
    for offset in (12, 13, 14):
        ledger.track(offset)
    server.generation = 1
    assert recovery.server_changed()
    recovery.replay_all({TP0: ledger}, "the Redis server changed")
    assert not recovery.server_changed()
    assert recovery.rewind_due and recovery.rewinding == {TP0}
    recovery.take({TP0}, {})
    assert recovery.replays(TP0, 14) and not recovery.replays(TP0, 15)
    # A second change in the middle of the replay keeps the bound, and adds what was taken.
    replaying = PartitionLedger(start=12)
    for offset in (12, 13, 14, 15, 16):
        replaying.track(offset)
    server.generation = 2
    recovery.replay_all({TP0: replaying}, "the Redis server changed")
    recovery.take({TP0}, {})
    assert recovery.replays(TP0, 16) and not recovery.replays(TP0, 17)


def test_a_replay_heals_each_subject_once_before_its_first_event() -> None:
    healed: list[str] = []

    async def heal(subject_id: str) -> None:
        healed.append(subject_id)

    recovery = Recovery(TOPIC, heal=heal)
    recovery.take({TP0}, {TP0: 12})

    async def scenario() -> None:
        for offset, subject in ((10, "ana"), (11, "ana"), (11, "bo"), (12, "cy")):
            await recovery.heal_before(TP0, offset, subject)

    asyncio.run(scenario())
    assert healed == ["ana", "bo"]  # "cy" at 12 is past the replay


def test_a_released_partition_forgets_its_replay() -> None:
    server = Server()
    recovery = Recovery(TOPIC, server=server)
    recovery.take({TP0, TP1}, {TP0: 5})
    server.generation = 1
    recovery.replay_all({TP1: PartitionLedger(start=3)}, "the Redis server changed")
    recovery.release({TP0, TP1})
    assert recovery.rewinding == set() and not recovery.replays(TP0, 0)
    assert recovery.rewind_due  # the new server is still to be accepted
    recovery.rewound()
    assert not recovery.rewind_due
