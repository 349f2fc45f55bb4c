"""An in-memory broker for running the worker without Kafka, in tests.

As Bytewax ships ``TestingSource``/``TestingSink`` and httpx ``MockTransport``,
this holds the parts of Kafka the worker's loop sees, in one process:

* :class:`InMemoryTopics` — the broker: partitioned logs, the group's committed
  offsets, and the transactions that wrote both;
* :class:`TestingConsumer` (``testing_consumer.py``) — a ``WorkerConsumer``
  (``ports.py``): the worker's subscription, whose rebalances the test drives
  and which, as librdkafka does, runs the rebalance callbacks inside ``consume``,
  keeps a partition's pause across its revocation and can deliver offsets again;
* :class:`TestingPublisher` — the transactional publisher: a commit appends its
  messages and moves the group's offsets together, or, told to fail, does neither;
* :class:`InMemoryMarks` — the store's commit marks (``sinks/redis/commits.py``)
  with the same refusal of a commit over a mark gone back.

What only a broker proves (librdkafka's threads, fencing, transaction timeouts)
stays in the broker tests; this is for the worker's own logic, in milliseconds.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from confluent_kafka import TIMESTAMP_CREATE_TIME, KafkaError, KafkaException, TopicPartition

from slotwise.sinks.kafka.publisher import TransactionAborted
from slotwise.streams.runtime.ports import WorkerClients
from slotwise.streams.runtime.testing_consumer import TestingConsumer
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.outbound import Outbound

__all__ = [
    "InMemoryMarks",
    "InMemoryTopics",
    "StoredMessage",
    "TestingConsumer",
    "TestingPublisher",
    "Transaction",
]

TP = tuple[str, int]


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message in a partition's log; also what the consumer hands the worker."""

    topic_name: str
    partition_id: int
    offset_id: int
    key_bytes: bytes | None
    value_bytes: bytes | None
    header_pairs: tuple[tuple[str, bytes], ...] = ()
    timestamp_ms: int = 0

    # The calls the worker makes of a confluent-kafka Message (``ports.Fetched``).
    def error(self) -> KafkaError | None:
        return None

    def topic(self) -> str:
        return self.topic_name

    def partition(self) -> int:
        return self.partition_id

    def offset(self) -> int:
        return self.offset_id

    def key(self) -> bytes | None:
        return self.key_bytes

    def value(self) -> bytes | None:
        return self.value_bytes

    def headers(self) -> list[tuple[str, bytes]]:
        return list(self.header_pairs)

    def timestamp(self) -> tuple[int, int]:
        return (TIMESTAMP_CREATE_TIME, self.timestamp_ms)


@dataclass(frozen=True, slots=True)
class Transaction:
    """One committed transaction: its messages and the group offsets it moved."""

    messages: tuple[StoredMessage, ...]
    offsets: Mapping[TP, int]


class InMemoryTopics:
    """The broker: one log per partition, and one consumer group's committed offsets.

    Keys are partitioned by CRC-32, so one subject's records share a partition as they
    do on Kafka (not the same partition number Kafka's murmur2 picks).
    """

    def __init__(self, partitions: Mapping[str, int]) -> None:
        self._logs: dict[TP, list[StoredMessage]] = {
            (topic, p): [] for topic, count in partitions.items() for p in range(count)
        }
        self._starts: dict[TP, int] = dict.fromkeys(self._logs, 0)
        self.committed: dict[TP, int] = {}
        self.transactions: list[Transaction] = []
        self.consumers: list[TestingConsumer] = []
        self.publishers: list[TestingPublisher] = []
        self._changed = threading.Condition()

    @classmethod
    def of(cls, catalogue: Catalogue) -> InMemoryTopics:
        """Every topic of the catalogue, as ``slotwise topics create`` makes them."""
        return cls({spec.name: spec.partitions for spec in catalogue.specs()})

    def clients(self, catalogue: Catalogue) -> WorkerClients:
        """Clients for a worker on these topics, as ``kafka_clients`` makes them on Kafka:
        each call makes a new one, listed in ``consumers`` and ``publishers``."""

        def consumer(group_instance_id: str | None) -> TestingConsumer:
            self.consumers.append(TestingConsumer(self))
            return self.consumers[-1]

        def publisher(transactional_id: str) -> TestingPublisher:
            self.publishers.append(TestingPublisher(self, catalogue))
            return self.publishers[-1]

        return WorkerClients(consumer=consumer, publisher=publisher)

    def partitions(self, topic: str) -> list[int]:
        return sorted(p for t, p in self._logs if t == topic)

    def produce(
        self,
        topic: str,
        value: bytes | None,
        *,
        key: bytes | None = None,
        partition: int | None = None,
        headers: Sequence[tuple[str, bytes]] = (),
        timestamp_ms: int = 0,
    ) -> StoredMessage:
        with self._changed:
            message = self._append(
                topic,
                value,
                key=key,
                partition=partition,
                headers=tuple(headers),
                timestamp_ms=timestamp_ms,
            )
            self._changed.notify_all()
        return message

    def messages(self, topic: str, partition: int | None = None) -> list[StoredMessage]:
        """What a partition (or every partition of the topic) holds, in offset order."""
        with self._changed:
            return [
                m
                for (t, p), log in sorted(self._logs.items())
                if t == topic and partition in (None, p)
                for m in log
            ]

    def ends(self, topic: str) -> dict[int, int]:
        """Each partition's next offset (its high watermark)."""
        with self._changed:
            return {p: self._end((t, p)) for t, p in self._logs if t == topic}

    def truncate_before(self, tp: TP, offset: int) -> None:
        """Retention: the log starts at ``offset`` from now on."""
        with self._changed:
            self._starts[tp] = offset

    def watermarks(self, tp: TP) -> tuple[int, int]:
        with self._changed:
            self._known(tp)
            return self._starts[tp], self._end(tp)

    def read(self, tp: TP, offset: int, limit: int) -> list[StoredMessage]:
        with self._changed:
            log = self._logs[tp]
            begin = max(offset, self._starts[tp])
            return [m for m in log[begin : begin + limit]]

    def commit(
        self, messages: Iterable[Outbound], offsets: Mapping[TP, int], names: Catalogue
    ) -> None:
        """A transaction: every message appended and every offset committed, at once."""
        with self._changed:
            written = tuple(
                self._append(m.topic_name(names), m.value, key=m.key, headers=m.headers)
                for m in messages
            )
            self.committed.update(offsets)
            self.transactions.append(Transaction(written, dict(offsets)))
            self._changed.notify_all()

    def wait(self, timeout_s: float) -> None:
        """Until something is produced, or ``timeout_s``."""
        with self._changed:
            self._changed.wait(timeout_s)

    def _append(
        self,
        topic: str,
        value: bytes | None,
        *,
        key: bytes | None,
        partition: int | None = None,
        headers: tuple[tuple[str, bytes], ...] = (),
        timestamp_ms: int = 0,
    ) -> StoredMessage:
        if partition is None:
            count = len(self.partitions(topic))
            partition = zlib.crc32(key) % count if key is not None and count else 0
        tp = (topic, partition)
        self._known(tp)
        log = self._logs[tp]
        message = StoredMessage(topic, partition, len(log), key, value, headers, timestamp_ms)
        log.append(message)
        return message

    def _end(self, tp: TP) -> int:
        return len(self._logs[tp])

    def _known(self, tp: TP) -> None:
        if tp not in self._logs:
            raise KafkaException(KafkaError(KafkaError._UNKNOWN_PARTITION, f"{tp} does not exist"))


class TestingPublisher:
    """The transactional publisher on :class:`InMemoryTopics`.

    ``fail(n)`` makes the next ``n`` commits abort (``TransactionAborted``, as on a
    broker that went away): nothing of them is written, and the checkpoint retries.
    """

    __test__ = False

    def __init__(self, topics: InMemoryTopics, catalogue: Catalogue) -> None:
        self._topics = topics
        self._catalogue = catalogue
        self._failing = 0
        self.inits = 0
        self.aborted = 0
        self.group_metadata: list[object] = []

    def fail(self, commits: int = 1) -> None:
        self._failing += commits

    def init(self) -> None:
        self.inits += 1

    def renew(self) -> None:
        self.init()

    def close(self) -> None:
        pass

    def probe(self, topic: str, timeout_s: float) -> None:
        self._topics.partitions(topic)

    def commit(
        self,
        messages: Sequence[Outbound],
        offsets: Sequence[TopicPartition],
        group_metadata: object,
    ) -> None:
        if self._failing:
            self._failing -= 1
            self.aborted += 1
            raise TransactionAborted("transaction aborted: failing as the test asked")
        self.group_metadata.append(group_metadata)
        self._topics.commit(
            messages, {(tp.topic, tp.partition): tp.offset for tp in offsets}, self._catalogue
        )


class InMemoryMarks:
    """The store's commit marks (``sinks/redis/commits.py``), in a dict.

    ``lose(...)`` takes marks back, as a Redis that came back missing its last writes.
    """

    def __init__(self, marks: Mapping[TP, int] | None = None) -> None:
        self.marks: dict[TP, int] = dict(marks or {})

    def lose(self, marks: Mapping[TP, int | None]) -> None:
        for tp, mark in marks.items():
            if mark is None:
                self.marks.pop(tp, None)
            else:
                self.marks[tp] = mark

    async def record(
        self, offsets: Mapping[TP, int], last: Mapping[TP, int] | None = None
    ) -> set[TP]:
        before = last or {}
        behind = {
            tp
            for tp in offsets
            if before.get(tp, -1) >= 0 and (tp not in self.marks or self.marks[tp] < before[tp])
        }
        if not behind:
            self.marks.update(offsets)
        return behind

    async def probe(self) -> None:
        pass

    async def known(self) -> bool:
        return bool(self.marks)

    async def read(self, partitions: Iterable[TP]) -> dict[TP, int]:
        return {tp: self.marks[tp] for tp in partitions if tp in self.marks}
