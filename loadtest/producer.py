"""Publish a workload to Kafka at a target rate or flat out, keyed by subject.

The producer is idempotent (a retried batch is not duplicated) with a short
linger and lz4, as every slotwise producer is. A target rate is held by a
token bucket whose waits are spent inside ``Producer.poll``, so delivery
reports keep flowing while it paces. The bucket holds two tokens by default:
a wake-up that comes late is made good on the next record (one token would
drift slow by every oversleep), while a producer that fell far behind sends
at most two records back to back rather than bursting to catch up. The
achieved rate is reported, not assumed.

Each record's produce time (epoch seconds, also set as the Kafka message
timestamp) is kept by id, for end-to-end latency measured downstream.

    python -m slotwise.loadtest.producer --subjects 200 --count 20000 --kind observations --rate 50
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, Message, Producer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.loadtest.locomo import default_path, observations, read_turns
from slotwise.loadtest.results import Figure, print_summary, write_result
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.streams.config import Settings
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import CONTENT_TYPE, encode_record
from slotwise.topics.connection import Connection
from slotwise.topics.records import CandidateFact, Observation

__all__ = ["PublishReport", "TokenBucket", "publish", "record_id"]

Publishable = Observation | CandidateFact
_PROGRESS_EVERY_S = 0.1


class TokenBucket:
    """Admits ``rate`` events per second on average, at most ``burst`` at once.

    ``clock`` and ``wait`` are injected: the producer waits by polling Kafka.
    """

    def __init__(
        self,
        rate: float,
        *,
        burst: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[float], object] = time.sleep,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be positive and burst at least 1")
        self._rate = rate
        self._burst = burst
        self._clock = clock
        self._wait = wait
        self._tokens = 1.0  # the first record goes at once, the rest at the rate
        self._last = clock()

    def take(self) -> None:
        """Block until one token is available, then spend it."""
        self._refill()
        if self._tokens < 1.0:
            due = self._last + (1.0 - self._tokens) / self._rate
            while (now := self._clock()) < due:
                self._wait(due - now)
            self._refill()
        # Rounding may leave a hair under one token at ``due``: the debt is repaid next time.
        self._tokens -= 1.0

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
        self._last = now


@dataclass(slots=True)
class PublishReport:
    """What a publish run did. ``produced_at`` maps record id to epoch seconds."""

    topic: str
    target_rate: float | None
    sent: int = 0
    delivered: int = 0
    failed: int = 0
    elapsed_s: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)
    produced_at: dict[str, float] = field(default_factory=dict)

    @property
    def achieved_rate(self) -> float:
        return self.delivered / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def figures(self) -> list[Figure]:
        return [
            Figure("topic", self.topic),
            Figure("target rate", self.target_rate, "records/s"),
            Figure("achieved rate", self.achieved_rate, "records/s"),
            Figure("sent", self.sent, "records"),
            Figure("delivered", self.delivered, "records"),
            Figure("failed", self.failed, "records"),
            Figure("elapsed", self.elapsed_s, "s"),
        ]


def record_id(record: Publishable) -> str:
    return record.observation_id if isinstance(record, Observation) else record.candidate_id


def publish(
    records: Iterable[Publishable],
    connection: Connection,
    topic: str,
    *,
    rate: float | None,
    total: int | None = None,
    burst: float = 2.0,
    track: bool = True,
    progress: bool = True,
    flush_timeout_s: float = 60.0,
    console: Console | None = None,
) -> PublishReport:
    """Produce every record to ``topic`` keyed by its subject; wait for all deliveries.

    ``rate`` None means flat out. ``track`` keeps each record's produce time.
    """
    producer = idempotent_producer(connection)
    report = PublishReport(topic=topic, target_rate=rate)

    def delivered(error: KafkaError | None, _message: Message) -> None:
        if error is None:
            report.delivered += 1
        else:
            report.failed += 1
            report.errors[error.name()] += 1

    bucket = None if rate is None else TokenBucket(rate, burst=burst, wait=producer.poll)
    bar = _bar(console, enabled=progress)
    task = bar.add_task(f"publishing to {topic}", total=total)
    started = time.monotonic()
    shown_at = started
    with bar:
        for record in records:
            if bucket is not None:
                bucket.take()
            now = time.time()
            headers = [("content-type", CONTENT_TYPE.encode()), ("schema", record.schema_.encode())]
            _produce(
                producer,
                topic,
                key=record.subject_id.encode(),
                value=encode_record(record),
                headers=headers,
                timestamp=int(now * 1000),
                on_delivery=delivered,
            )
            report.sent += 1
            if track:
                report.produced_at[record_id(record)] = now
            producer.poll(0)
            if time.monotonic() - shown_at >= _PROGRESS_EVERY_S:
                shown_at = time.monotonic()
                bar.update(task, completed=report.sent)
        remaining = producer.flush(flush_timeout_s)
        bar.update(task, completed=report.sent)
    report.elapsed_s = time.monotonic() - started
    if remaining:
        report.errors["undelivered_at_flush"] += remaining
    return report


def _produce(producer: Producer, topic: str, **message: Any) -> None:
    # A full local queue is backpressure, not failure: serve deliveries and retry.
    while True:
        try:
            producer.produce(topic, **message)
            return
        except BufferError:
            producer.poll(0.05)


def _bar(console: Console | None, *, enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled,
    )


def _records(args: argparse.Namespace) -> tuple[Iterator[Publishable], int | None]:
    if args.corpus is not None:
        turns = read_turns(args.corpus)
        replayed: Iterator[Publishable] = observations(turns, args.replicas, prefix=args.prefix)
        total = len(turns) * args.replicas
        if args.count:
            return itertools.islice(replayed, args.count), min(args.count, total)
        return replayed, total
    config = WorkloadConfig(
        subjects=args.subjects, count=args.count, seed=args.seed, subject_prefix=args.prefix
    )
    writes = generate(config, AttributeSchema.load())
    if args.kind == "candidates":
        return (w.candidate() for w in writes), args.count
    return (w.observation() for w in writes), args.count


def main(argv: Sequence[str] | None = None) -> None:
    settings = Settings()
    parser = argparse.ArgumentParser(
        prog="python -m slotwise.loadtest.producer",
        description="Publish a synthetic or LoCoMo workload.",
    )
    parser.add_argument(
        "--bootstrap",
        default=settings.kafka_bootstrap,
        help="the brokers; their security comes from SLOTWISE_KAFKA_*",
    )
    parser.add_argument("--kind", choices=("observations", "candidates"), default="observations")
    parser.add_argument("--topic", help="default: the catalogue's topic for --kind")
    parser.add_argument("--topic-prefix", default=settings.topic_prefix)
    parser.add_argument("--partitions", type=int, default=settings.partitions)
    parser.add_argument("--subjects", type=int, default=200)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--prefix", default="lt", help="subject id prefix")
    parser.add_argument("--rate", type=float, default=None, help="records/s; omit for flat out")
    parser.add_argument(
        "--corpus",
        type=Path,
        nargs="?",
        const=default_path(),
        default=None,
        help="replay LoCoMo turns as observations (default path if no value)",
    )
    parser.add_argument("--replicas", type=int, default=10, help="copies of each LoCoMo speaker")
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args(argv)
    if args.corpus is not None:
        args.kind = "observations"
        args.prefix = f"{args.prefix}-" if args.prefix else ""
    connection = settings.librdkafka({"bootstrap.servers": args.bootstrap})
    catalogue = Catalogue(prefix=args.topic_prefix, partitions=args.partitions)
    topic = args.topic or getattr(catalogue, args.kind)
    if args.topic is None:
        ensure_topics(connection, catalogue, settings.replication_factor)
    records, total = _records(args)
    report = publish(records, connection, topic, rate=args.rate, total=total, track=False)
    print_summary(f"publish {args.kind}", report.figures())
    if args.json:
        config = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
        write_result(args.json, "publish", report.figures(), config=config | {"topic": topic})


if __name__ == "__main__":
    main()
