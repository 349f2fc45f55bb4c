"""A subject's newest records on a subject-keyed topic (supersessions, review, erasures).

These topics are keyed by ``subject_id`` with librdkafka's default partitioner
(``consistent_random``: CRC32 of the key, modulo the partition count), so all
of one subject's records sit in one partition. A read finds that partition,
scans it *backwards* in growing windows from its end, keeps the records whose
key is the subject's, and stops once it has ``limit`` of them, has reached the
start of the partition, or has scanned ``max_scan`` offsets — the bound that
keeps a request against a busy partition cheap. ``LogPage.complete`` says
whether the scan saw the whole partition.

It reads with ``isolation.level=read_committed``, as every subscriber does:
the records of an open or aborted worker transaction are never shown.

One consumer serves every read, one read at a time (a confluent consumer is
not to be used from two threads at once); it is assigned, never subscribed,
and commits nothing.
"""

from __future__ import annotations

import threading
import time
import uuid
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from pydantic import BaseModel

from slotwise.topics.codec import decode_record
from slotwise.topics.exceptions import RecordError, SlotwiseError

__all__ = ["LogPage", "LogUnavailable", "SubjectLog", "partition_for"]

_FIRST_WINDOW = 500


class LogUnavailable(SlotwiseError, RuntimeError):
    """The broker did not answer, or the topic does not exist."""


def partition_for(key: bytes, partitions: int) -> int:
    """The partition librdkafka's default partitioner gives a non-empty key."""
    return zlib.crc32(key) % partitions


@dataclass(frozen=True, slots=True)
class LogPage:
    """Up to ``limit`` records of one subject, newest first."""

    records: tuple[BaseModel, ...]
    partition: int
    scanned: int
    complete: bool


class SubjectLog:
    def __init__(
        self,
        connection: Mapping[str, Any],
        *,
        max_scan: int = 100_000,
        timeout_s: float = 10.0,
    ) -> None:
        self._config = {
            **connection,
            "group.id": f"slotwise-reads-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": "read_committed",
            "fetch.wait.max.ms": 20,
        }
        self._max_scan = max_scan
        self._timeout_s = timeout_s
        self._consumer: Consumer | None = None
        self._partitions: dict[str, int] = {}
        self._lock = threading.Lock()

    def newest(
        self,
        topic: str,
        subject_id: str,
        limit: int,
        expect: tuple[type[BaseModel], ...],
    ) -> LogPage:
        """The subject's newest ``limit`` records of ``topic``; blocking."""
        key = subject_id.encode()
        with self._lock:
            try:
                return self._newest(topic, key, limit, expect)
            except KafkaException as exc:
                raise LogUnavailable(f"reading {topic}: {exc.args[0]}") from exc

    def close(self) -> None:
        with self._lock:
            if self._consumer is not None:
                self._consumer.close()
                self._consumer = None

    def _newest(
        self, topic: str, key: bytes, limit: int, expect: tuple[type[BaseModel], ...]
    ) -> LogPage:
        consumer = self._connected()
        partition = partition_for(key, self._partition_count(consumer, topic))
        low, high = consumer.get_watermark_offsets(
            TopicPartition(topic, partition), timeout=self._timeout_s, cached=False
        )
        deadline = time.monotonic() + self._timeout_s
        found: list[BaseModel] = []
        end, window, scanned = high, _FIRST_WINDOW, 0
        while end > low and len(found) < limit and scanned < self._max_scan:
            start = max(low, end - window, end - (self._max_scan - scanned))
            older = self._range(
                consumer, topic, partition, start, end, key=key, expect=expect, deadline=deadline
            )
            found = older + found
            scanned += end - start
            end, window = start, window * 2
        newest_first = tuple(reversed(found[-limit:])) if limit else ()
        return LogPage(newest_first, partition, scanned, complete=end <= low)

    def _range(
        self,
        consumer: Consumer,
        topic: str,
        partition: int,
        start: int,
        end: int,
        *,
        key: bytes,
        expect: tuple[type[BaseModel], ...],
        deadline: float,
    ) -> list[BaseModel]:
        """The subject's records among offsets ``[start, end)``, oldest first."""
        consumer.assign([TopicPartition(topic, partition, start)])
        records: list[BaseModel] = []
        try:
            while True:
                if time.monotonic() > deadline:
                    raise LogUnavailable(f"reading {topic}[{partition}] took over the deadline")
                message = consumer.poll(0.2)
                if message is None:
                    continue
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        return records
                    raise KafkaException(error)
                offset = message.offset()
                if offset is None or offset >= end:
                    return records
                if message.key() != key:
                    continue
                try:
                    records.append(decode_record(message.value(), key=key, expect=expect))
                except RecordError:
                    continue  # not this subject's readable record; the worker wrote it
                if offset >= end - 1:
                    return records
        finally:
            consumer.unassign()

    def _connected(self) -> Consumer:
        if self._consumer is None:
            self._consumer = Consumer(self._config)
        return self._consumer

    def _partition_count(self, consumer: Consumer, topic: str) -> int:
        count = self._partitions.get(topic)
        if count is None:
            metadata = consumer.list_topics(topic, timeout=self._timeout_s).topics.get(topic)
            if metadata is None or metadata.error is not None or not metadata.partitions:
                why = getattr(metadata, "error", None) or "no partitions"
                raise LogUnavailable(f"topic {topic} is not there: {why}")
            count = self._partitions[topic] = len(metadata.partitions)
        return count
