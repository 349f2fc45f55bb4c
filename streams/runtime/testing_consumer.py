"""The in-memory broker's consumer (``testing.py``): the worker's subscription on it.

The test drives the group: :meth:`TestingConsumer.rebalance` queues a revocation,
a loss or an assignment, and the next ``consume`` carries it out with the
worker's callbacks, on the thread that calls ``consume``, as librdkafka does.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from confluent_kafka import OFFSET_INVALID, KafkaError, KafkaException, TopicPartition

from slotwise.streams.runtime.ports import RebalanceCallback

if TYPE_CHECKING:
    from slotwise.streams.runtime.testing import InMemoryTopics, StoredMessage

__all__ = ["TestingConsumer"]

TP = tuple[str, int]


@dataclass
class _Rebalance:
    assign: list[TP] = field(default_factory=list)
    revoke: list[TP] = field(default_factory=list)
    lost: bool = False


class TestingConsumer:
    """The worker's consumer on :class:`InMemoryTopics` (see the module's docstring).

    ``calls`` names every call with the thread it came from: the worker must touch
    its consumer from its poll thread alone.
    """

    __test__ = False  # not a pytest test class, despite its name

    def __init__(self, topics: InMemoryTopics) -> None:
        self._topics = topics
        self._subscribed: list[str] = []
        self._callbacks: dict[str, RebalanceCallback | None] = {}
        self._owned: dict[TP, int] = {}  # assigned partition → next offset to fetch
        self._paused: set[TP] = set()  # kept across a revocation, as librdkafka keeps it
        self._pending: list[_Rebalance] = []
        self._again: dict[TP, int] = {}
        self.generation = 0
        self.closed = False
        self.calls: list[tuple[str, str]] = []

    # -- what the test drives ------------------------------------------------

    def rebalance(
        self, *, assign: Iterable[TP] = (), revoke: Iterable[TP] = (), lost: bool = False
    ) -> None:
        """A rebalance the next ``consume`` carries out: the revocation (or loss) first,
        with its callback, then the assignment with its."""
        self._pending.append(_Rebalance(list(assign), list(revoke), lost))

    def deliver_again(self, tp: TP, offset: int) -> None:
        """The next ``consume`` fetches ``tp`` from ``offset`` again, as librdkafka has
        been seen to after a pause and a resume around an offset lookup."""
        self._again[tp] = offset

    @property
    def paused(self) -> set[TP]:
        return set(self._paused)

    # -- the WorkerConsumer calls ---------------------------------------------

    def subscribe(
        self,
        topics: list[str],
        on_assign: RebalanceCallback | None = None,
        on_revoke: RebalanceCallback | None = None,
        on_lost: RebalanceCallback | None = None,
    ) -> None:
        self._note("subscribe")
        self._subscribed = list(topics)
        self._callbacks = {"assign": on_assign, "revoke": on_revoke, "lost": on_lost}
        # Alone in its group, the consumer is given every partition of its topics.
        everything = [(t, p) for t in topics for p in self._topics.partitions(t)]
        self._pending.append(_Rebalance(assign=everything))

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[StoredMessage]:
        self._note("consume")
        while self._pending:
            self._carry_out(self._pending.pop(0))
        for tp, offset in self._again.items():
            if tp in self._owned:
                self._owned[tp] = offset
        self._again.clear()
        fetched: list[StoredMessage] = []
        for tp in sorted(self._owned):
            if tp in self._paused or len(fetched) >= num_messages:
                continue
            batch = self._topics.read(tp, self._owned[tp], num_messages - len(fetched))
            if batch:
                self._owned[tp] = batch[-1].offset_id + 1
                fetched.extend(batch)
        if not fetched and timeout > 0:
            self._topics.wait(min(timeout, 0.01))
        return fetched

    def assignment(self) -> list[TopicPartition]:
        self._note("assignment")
        return [TopicPartition(t, p) for t, p in sorted(self._owned)]

    def incremental_assign(self, partitions: list[TopicPartition]) -> None:
        self._note("incremental_assign")
        for tp in partitions:
            key = (tp.topic, tp.partition)
            start = tp.offset
            if start < 0:
                committed = self._topics.committed.get(key)
                start = committed if committed is not None else self._topics.watermarks(key)[0]
            self._owned[key] = start

    def seek(self, partition: TopicPartition) -> None:
        self._note("seek")
        key = (partition.topic, partition.partition)
        if key not in self._owned:
            raise KafkaException(KafkaError(KafkaError._STATE, f"{key} is not assigned"))
        self._owned[key] = partition.offset

    def pause(self, partitions: list[TopicPartition]) -> None:
        self._note("pause")
        self._paused |= {(tp.topic, tp.partition) for tp in partitions}

    def resume(self, partitions: list[TopicPartition]) -> None:
        self._note("resume")
        self._paused -= {(tp.topic, tp.partition) for tp in partitions}

    def committed(
        self, partitions: list[TopicPartition], timeout: float = -1
    ) -> list[TopicPartition]:
        self._note("committed")
        return [
            TopicPartition(
                tp.topic,
                tp.partition,
                self._topics.committed.get((tp.topic, tp.partition), OFFSET_INVALID),
            )
            for tp in partitions
        ]

    def get_watermark_offsets(
        self, partition: TopicPartition, timeout: float = -1, cached: bool = False
    ) -> tuple[int, int]:
        self._note("get_watermark_offsets")
        return self._topics.watermarks((partition.topic, partition.partition))

    def consumer_group_metadata(self) -> Any:
        self._note("consumer_group_metadata")
        return ("group", self.generation)

    def close(self) -> None:
        """Leave the group: the owned partitions are revoked, with the callback."""
        self._note("close")
        if self._owned:
            self._carry_out(_Rebalance(revoke=sorted(self._owned)))
        self.closed = True

    # -- inside --------------------------------------------------------------

    def _carry_out(self, change: _Rebalance) -> None:
        self.generation += 1
        if change.revoke:
            gone = [tp for tp in change.revoke if tp in self._owned]
            self._callback("lost" if change.lost else "revoke", gone)
            for tp in gone:
                self._owned.pop(tp, None)
        if change.assign:
            # The callback assigns them (incremental_assign), or they stay unowned.
            self._callback("assign", [tp for tp in change.assign if tp not in self._owned])

    def _callback(self, kind: str, tps: list[TP]) -> None:
        callback = self._callbacks.get(kind)
        if callback is not None:
            callback(self, [TopicPartition(t, p) for t, p in tps])

    def _note(self, call: str) -> None:
        self.calls.append((call, threading.current_thread().name))
