"""The physical ceiling of this design on this machine.

A bare confluent-kafka loop does, per record, the least the worker must do:
consume it, write it to Redis (one ``HSET`` round trip under the subject's
key) and produce one message to the output topic; offsets are committed every
``commit_interval_s``. The ``transactional`` variant commits outputs and
offsets together in one Kafka transaction per interval, as the worker does
(:class:`~sinks.kafka_publisher.TransactionalPublisher`). No decoding, no
model, no vector store: whatever slotwise achieves is measured against this
as ``slotwise / baseline``.

The input is the catalogue's candidates topic, pre-loaded with N generated
candidates; the output is its facts topic. The clock runs from the first
record consumed (group join excluded) to the last commit.

    python -m slotwise.loadtest.baseline --records 20000 --runs 3
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import redis
from confluent_kafka import Consumer, Message, Producer, TopicPartition

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.loadtest.producer import publish
from slotwise.loadtest.results import Figure, median, print_summary, write_result
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.kafka.admin import delete_topics, ensure_topics
from slotwise.sinks.kafka.publisher import TransactionalPublisher, idempotent_producer
from slotwise.streams.config import Settings
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.connection import Connection, client_config
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.outbound import Outbound

_BOOTSTRAP = "the brokers; their security comes from SLOTWISE_KAFKA_*"

__all__ = ["BaselineError", "BaselineRun", "Ceiling", "measure_ceiling", "preload", "run_baseline"]

Mode = Literal["plain", "transactional"]
_BATCH = 1_000


class BaselineError(SlotwiseError, RuntimeError):
    """The loop did not see every pre-loaded record before its deadline."""


@dataclass(frozen=True, slots=True)
class BaselineRun:
    mode: Mode
    records: int
    elapsed_s: float

    @property
    def rate(self) -> float:
        return self.records / self.elapsed_s if self.elapsed_s > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Ceiling:
    """The median of several runs of one mode: the figure slotwise is divided by."""

    mode: Mode
    runs: tuple[BaselineRun, ...]

    @property
    def rate(self) -> float:
        return median([r.rate for r in self.runs])

    def figures(self) -> list[Figure]:
        rates = ", ".join(f"{r.rate:,.0f}" for r in self.runs)
        return [
            Figure(f"{self.mode}: median", self.rate, "records/s"),
            Figure(f"{self.mode}: runs", rates, "records/s"),
        ]


def preload(
    connection: Connection,
    catalogue: Catalogue,
    records: int,
    *,
    subjects: int = 200,
    seed: int = 42,
) -> int:
    """Publish ``records`` generated candidates to the catalogue's candidates topic."""
    config = WorkloadConfig(subjects=subjects, count=records, seed=seed, subject_prefix="baseline")
    candidates = (w.candidate() for w in generate(config, AttributeSchema.load()))
    report = publish(
        candidates,
        connection,
        catalogue.candidates,
        rate=None,
        total=records,
        track=False,
        progress=False,
    )
    if report.delivered != records:
        raise BaselineError(f"pre-load delivered {report.delivered} of {records}: {report.errors}")
    return report.delivered


def run_baseline(
    connection: Connection,
    redis_url: str,
    catalogue: Catalogue,
    *,
    expected: int,
    mode: Mode = "plain",
    commit_interval_s: float = 0.2,
    deadline_s: float = 300.0,
) -> BaselineRun:
    """Consume the candidates topic from the start in a fresh group until ``expected`` records."""
    run_id = uuid.uuid4().hex[:12]
    consumer = Consumer(client_config(connection, {
        "group.id": f"{catalogue.prefix}-baseline-{mode}-{run_id}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
    }))  # fmt: skip
    store = redis.Redis.from_url(redis_url)
    loop = _Loop(connection, catalogue, mode, f"{catalogue.prefix}:baseline:{run_id}", run_id)
    consumer.subscribe([catalogue.candidates])
    seen = 0
    first: float | None = None
    last_commit = time.monotonic()
    give_up = time.monotonic() + deadline_s
    try:
        while seen < expected:
            if time.monotonic() > give_up:
                raise BaselineError(f"{mode}: saw {seen} of {expected} records in {deadline_s} s")
            batch = consumer.consume(num_messages=_BATCH, timeout=0.5)
            for message in batch:
                if message.error() is not None:
                    continue
                first = first or time.monotonic()
                loop.apply(store, message)
                seen += 1
            if time.monotonic() - last_commit >= commit_interval_s or seen >= expected:
                loop.commit(consumer)
                last_commit = time.monotonic()
        elapsed = time.monotonic() - (first or time.monotonic())
    finally:
        consumer.close()
        loop.close(store)
    return BaselineRun(mode=mode, records=seen, elapsed_s=elapsed)


class _Loop:
    """Per-record work and per-interval commit of one mode."""

    def __init__(
        self, connection: Connection, catalogue: Catalogue, mode: Mode, key_prefix: str, run_id: str
    ) -> None:
        self._catalogue = catalogue
        self._key_prefix = key_prefix
        self._offsets: dict[tuple[str, int], int] = {}
        self._pending: list[Outbound] = []
        self._plain = idempotent_producer(connection) if mode == "plain" else None
        self._transactional = (
            TransactionalPublisher(connection, f"{catalogue.prefix}-baseline-{run_id}", catalogue)
            if mode == "transactional"
            else None
        )
        if self._transactional is not None:
            self._transactional.init()

    def apply(self, store: redis.Redis, message: Message) -> None:
        key = message.key() or b""
        topic, partition, offset = _position(message)
        store.hset(f"{self._key_prefix}:{key.decode()}", f"{partition}:{offset}", message.value())
        self._offsets[(topic, partition)] = offset + 1
        if self._plain is not None:
            _produce(self._plain, self._catalogue.facts, key, message.value())
        else:
            self._pending.append(Outbound(topic="facts", key=key, value=message.value()))

    def commit(self, consumer: Consumer) -> None:
        if not self._offsets:
            return
        offsets = [TopicPartition(t, p, o) for (t, p), o in self._offsets.items()]
        if self._transactional is not None:
            self._transactional.commit(self._pending, offsets, consumer.consumer_group_metadata())
            self._pending.clear()
        elif self._plain is not None:
            # At-least-once: outputs are delivered before the offsets that cover them.
            self._plain.flush(30.0)
            consumer.commit(offsets=offsets, asynchronous=False)
        self._offsets.clear()

    def close(self, store: redis.Redis) -> None:
        if self._plain is not None:
            self._plain.flush(30.0)
        if self._transactional is not None:
            self._transactional.close()
        keys = list(store.scan_iter(match=f"{self._key_prefix}:*", count=1_000))
        for start in range(0, len(keys), 1_000):
            store.delete(*keys[start : start + 1_000])


def _position(message: Message) -> tuple[str, int, int]:
    topic, partition, offset = message.topic(), message.partition(), message.offset()
    if topic is None or partition is None or offset is None:
        raise BaselineError("a consumed message carries no topic, partition or offset")
    return topic, partition, offset


def _produce(producer: Producer, topic: str, key: bytes, value: bytes | None) -> None:
    while True:
        try:
            producer.produce(topic, key=key, value=value)
            producer.poll(0)
            return
        except BufferError:
            producer.poll(0.05)


def measure_ceiling(
    connection: Connection,
    redis_url: str,
    catalogue: Catalogue,
    *,
    records: int,
    runs: int = 3,
    modes: Sequence[Mode] = ("plain", "transactional"),
) -> dict[Mode, Ceiling]:
    """Pre-load the catalogue's candidates topic once, then run each mode ``runs`` times."""
    preload(connection, catalogue, records)
    return {
        mode: Ceiling(
            mode,
            tuple(
                run_baseline(connection, redis_url, catalogue, expected=records, mode=mode)
                for _ in range(runs)
            ),
        )
        for mode in modes
    }


def main(argv: Sequence[str] | None = None) -> None:
    settings = Settings()
    parser = argparse.ArgumentParser(
        prog="python -m slotwise.loadtest.baseline", description=__doc__
    )
    parser.add_argument("--bootstrap", default=settings.kafka_bootstrap, help=_BOOTSTRAP)
    parser.add_argument("--redis-url", default=settings.redis_url)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=settings.partitions)
    parser.add_argument("--mode", choices=("plain", "transactional", "both"), default="both")
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args(argv)
    modes: tuple[Mode, ...] = ("plain", "transactional") if args.mode == "both" else (args.mode,)
    connection = settings.librdkafka({"bootstrap.servers": args.bootstrap})
    catalogue = Catalogue(prefix=f"baseline-{uuid.uuid4().hex[:8]}", partitions=args.partitions)
    ensure_topics(connection, catalogue, settings.replication_factor)
    try:
        ceilings = measure_ceiling(
            connection,
            args.redis_url,
            catalogue,
            records=args.records,
            runs=args.runs,
            modes=modes,
        )
    finally:
        delete_topics(connection, [spec.name for spec in catalogue.specs()])
    figures = [Figure("records per run", args.records, "records")]
    figures += [f for ceiling in ceilings.values() for f in ceiling.figures()]
    print_summary("baseline: consume → Redis HSET → produce", figures)
    if args.json:
        config = {"records": args.records, "runs": args.runs, "partitions": args.partitions}
        write_result(args.json, "baseline", figures, config=config)


if __name__ == "__main__":
    main()
