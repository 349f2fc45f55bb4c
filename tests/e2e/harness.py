"""Run real worker processes against the real stack, and watch what they committed."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from pydantic import BaseModel

from sinks.redis_store import RedisStore
from streams.settings import Settings
from topics.catalogue import Catalogue
from topics.codec import decode_record, encode_record
from topics.records import CandidateFact, SupersessionEvent

__all__ = [
    "Pipeline",
    "WorkerProcess",
    "assert_exactly_once",
    "free_port",
    "produce_contradictions",
    "service_port",
    "store_call",
]


_COORDINATOR_MOVING = frozenset(
    {
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError._TIMED_OUT,
        KafkaError._TRANSPORT,
    }
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def service_port(span: int = 1) -> int:
    """A free port (and the ``span - 1`` after it) below the ephemeral range, for a
    service restarted mid-test: by the time it binds again, a client connection may
    hold any ephemeral port."""
    rng = random.Random()
    while True:
        port = rng.randrange(20_000, 32_000)
        try:
            with contextlib.ExitStack() as held:
                for offset in range(span):
                    held.enter_context(socket.socket()).bind(("127.0.0.1", port + offset))
        except OSError:
            continue
        return port


@dataclass
class WorkerProcess:
    """One ``python -m streams worker`` process with its own metrics port and log file."""

    env: dict[str, str]
    instance: str
    log_path: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerProcess:
        env = {**os.environ, **self.env, "SLOTWISE_METRICS_PORT": str(self.port)}
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "streams", "worker", "--instance", self.instance],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        return self

    def health(self) -> int | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as r:
                return int(r.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        except OSError:
            return None

    def events_in(self) -> float:
        """Records this process consumed, from its Prometheus metrics."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            text = r.read().decode()
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("slotwise_events_in_total{")
        )

    def wait_healthy(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            if self.health() == 200:
                return
            time.sleep(0.2)
        raise TimeoutError(f"worker {self.instance} not healthy in {timeout}s:\n{self.log_tail()}")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def terminate(self, timeout: float = 60.0) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def request_stacks(self) -> None:
        """Ask the worker to log every thread's and task's stack (see streams.diagnostics)."""
        if self.alive():
            assert self.process is not None
            self.process.send_signal(signal.SIGUSR1)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(
                f"worker {self.instance} exited with {self.process.returncode}:\n{self.log_tail()}"
            )

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@dataclass
class Pipeline:
    """Fresh topics plus a worker group, a Redis prefix and a Milvus alias of its own."""

    settings: Settings
    catalogue: Catalogue
    log_dir: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    group_id: str = field(default_factory=lambda: f"g-{uuid.uuid4().hex[:8]}")
    redis_prefix: str = field(default_factory=lambda: f"t{uuid.uuid4().hex[:8]}")
    milvus_alias: str = field(default_factory=lambda: f"t{uuid.uuid4().hex[:8]}_current")
    workers: list[WorkerProcess] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        return {
            "SLOTWISE_KAFKA_BOOTSTRAP": self.settings.kafka_bootstrap,
            "SLOTWISE_REDIS_URL": self.settings.redis_url,
            "SLOTWISE_MILVUS_URI": self.settings.milvus_uri,
            "SLOTWISE_TOPIC_PREFIX": self.catalogue.prefix,
            "SLOTWISE_PARTITIONS": str(self.catalogue.partitions),
            "SLOTWISE_GROUP_ID": self.group_id,
            "SLOTWISE_REDIS_PREFIX": self.redis_prefix,
            "SLOTWISE_MILVUS_ALIAS": self.milvus_alias,
            "SLOTWISE_MILVUS_COLLECTION_PREFIX": self.milvus_alias.removesuffix("_current"),
            "SLOTWISE_COMMIT_INTERVAL_MS": "100",
            **self.extra_env,
        }

    def worker(self, instance: str | None = None) -> WorkerProcess:
        name = instance or f"w{len(self.workers)}"
        process = WorkerProcess(self.env, name, self.log_dir / f"{self.group_id}-{name}.log")
        self.workers.append(process)
        return process.start()

    def stop_all(self) -> None:
        for process in self.workers:
            if process.alive():
                try:
                    process.terminate(30)
                except subprocess.TimeoutExpired:
                    process.kill()

    def publish(
        self, topic: str, records: Iterable[BaseModel], *, base_timestamp_ms: int | None = None
    ) -> dict[int, int]:
        """Produce keyed by subject; returns, per partition, the offset after the last record.

        With ``base_timestamp_ms`` the i-th record carries that Kafka timestamp plus i, so
        two runs of the same input see the same event times.
        """
        producer = Producer(
            {
                "bootstrap.servers": self.settings.kafka_bootstrap,
                "enable.idempotence": True,
                "linger.ms": 5,
            }
        )
        ends: dict[int, int] = {}

        def delivered(err: object, msg: object) -> None:
            assert err is None, err
            ends[msg.partition()] = max(ends.get(msg.partition(), 0), msg.offset() + 1)  # type: ignore[attr-defined]

        for i, record in enumerate(records):
            key = record.subject_id.encode()  # type: ignore[attr-defined]
            stamp = {} if base_timestamp_ms is None else {"timestamp": base_timestamp_ms + i}
            producer.produce(
                topic, value=encode_record(record), key=key, on_delivery=delivered, **stamp
            )
            producer.poll(0)
        assert producer.flush(60) == 0
        return ends

    def publish_raw(
        self, topic: str, items: Sequence[tuple[bytes | None, bytes | None]]
    ) -> dict[int, int]:
        producer = Producer(
            {
                "bootstrap.servers": self.settings.kafka_bootstrap,
                "message.max.bytes": 16 * 1024 * 1024,
            }
        )
        ends: dict[int, int] = {}

        def delivered(err: object, msg: object) -> None:
            assert err is None, err
            ends[msg.partition()] = max(ends.get(msg.partition(), 0), msg.offset() + 1)  # type: ignore[attr-defined]

        for key, value in items:
            producer.produce(topic, value=value, key=key, on_delivery=delivered)
            producer.poll(0)
        assert producer.flush(60) == 0
        return ends

    def diagnose(self) -> str:
        """The live workers' thread and task stacks (SIGUSR1), the group, and every log's tail."""
        for process in self.workers:
            process.request_stacks()
        time.sleep(2)
        tails = (f"=== {w.instance}: {w.log_path}\n{w.log_tail(400)}" for w in self.workers)
        return "\n".join([self.describe_group(), *tails])

    def describe_group(self) -> str:
        admin = AdminClient({"bootstrap.servers": self.settings.kafka_bootstrap})
        try:
            group = admin.describe_consumer_groups([self.group_id])[self.group_id].result(10)
        except Exception as exc:
            return f"group {self.group_id}: {exc!r}"
        lines = [f"group {self.group_id}: {group.state}"]
        for member in group.members:
            owned = sorted((tp.topic, tp.partition) for tp in member.assignment.topic_partitions)
            lines.append(f"  {member.group_instance_id or member.member_id}: {owned}")
        return "\n".join(lines)

    def committed(self, topic: str) -> dict[int, int]:
        consumer = Consumer(
            {
                "bootstrap.servers": self.settings.kafka_bootstrap,
                "group.id": self.group_id,
                "enable.auto.commit": False,
            }
        )
        tps = [TopicPartition(topic, p) for p in range(self.catalogue.partitions)]
        deadline = time.monotonic() + 60
        try:
            while True:
                try:
                    return {tp.partition: tp.offset for tp in consumer.committed(tps, timeout=10)}
                except KafkaException as exc:
                    # A restarted broker answers NOT_COORDINATOR until the group's
                    # coordinator has loaded its offsets.
                    error = exc.args[0]
                    passing = error.retriable() or error.code() in _COORDINATOR_MOVING
                    if not passing or time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
        finally:
            consumer.close()

    def wait_committed(self, topic: str, ends: dict[int, int], timeout: float = 120.0) -> None:
        """Until the group's committed offsets pass every record published (``ends``)."""
        deadline = time.monotonic() + timeout
        while True:
            committed = self.committed(topic)
            if all(committed.get(p, -1) >= end for p, end in ends.items()):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"committed {committed} never reached {ends}:\n{self.diagnose()}"
                )
            time.sleep(0.25)

    def wait_some_committed(self, minimum: int, timeout: float = 180.0) -> None:
        """Until the group has committed at least ``minimum`` candidates."""
        deadline = time.monotonic() + timeout
        while True:
            done = sum(max(0, o) for o in self.committed(self.catalogue.candidates).values())
            if done >= minimum:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"only {done} candidates committed in {timeout}s:\n{self.diagnose()}"
                )
            time.sleep(0.2)

    def read_committed(
        self, topic: str, idle_s: float = 2.0
    ) -> list[tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]]:
        """Every committed message of a topic, from the beginning to the end."""
        consumer = Consumer(
            {
                "bootstrap.servers": self.settings.kafka_bootstrap,
                "group.id": f"r-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
            }
        )
        try:
            consumer.assign([TopicPartition(topic, p, 0) for p in range(self.catalogue.partitions)])
            found = []
            last = time.monotonic()
            while time.monotonic() - last < idle_s:
                message = consumer.poll(0.2)
                if message is None or message.error() is not None:
                    continue
                last = time.monotonic()
                found.append((message.key(), message.value(), message.headers() or []))
            return found
        finally:
            consumer.close()


def store_call(pipeline: Pipeline, method: str, *args: object, **kwargs: object) -> object:
    """Call one RedisStore coroutine against the pipeline's Redis prefix."""

    async def call() -> object:
        store = RedisStore.from_url(pipeline.settings.redis_url, prefix=pipeline.redis_prefix)
        try:
            return await getattr(store, method)(*args, **kwargs)
        finally:
            await store.close()

    return asyncio.run(call())


def produce_contradictions(
    bootstrap: str,
    topic: str,
    producer_no: int,
    *,
    subjects: Sequence[str],
    attributes: Sequence[str],
    count: int,
    seed: int,
) -> list[tuple[str, str, str, str, int, int]]:
    """One racing producer: ``count`` contradictory single-valued writes, as fast as it can.

    ``valid_from`` is drawn from a few days of whole hours, so ties are common.
    Returns ``(candidate_id, subject, attribute, value, partition, offset)`` per write.
    """
    rng = random.Random(seed)
    producer = Producer(
        {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 1}
    )
    placed: dict[str, tuple[int, int]] = {}
    failed: list[str] = []

    def delivered(candidate_id: str, err: object, msg: object) -> None:
        if err is not None:
            failed.append(str(err))
        else:
            placed[candidate_id] = (msg.partition(), msg.offset())  # type: ignore[attr-defined]

    written: list[tuple[str, str, str, str]] = []
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(count):
        subject = rng.choice(subjects)
        attribute = rng.choice(attributes)
        value = f"{attribute}-p{producer_no}-{i}"
        candidate = CandidateFact(
            candidate_id=str(uuid.uuid4()),
            subject_id=subject,
            attribute=attribute,
            value=value,
            text=f"User's {attribute} is {value}.",
            observed_at=base + timedelta(hours=rng.randrange(72)),
            confidence=0.9,
        )
        producer.produce(
            topic,
            key=subject.encode(),
            value=encode_record(candidate),
            on_delivery=functools.partial(delivered, candidate.candidate_id),
        )
        producer.poll(0)
        written.append((candidate.candidate_id, subject, attribute, value))
    assert producer.flush(60) == 0 and not failed, failed[:3]
    return [(c, s, a, v, *placed[c]) for c, s, a, v in written]


def assert_exactly_once(pipeline: Pipeline, candidates: Sequence[CandidateFact]) -> None:
    """Every candidate applied, every event published once, the facts topic equal to Redis."""
    for candidate in candidates:
        stored = store_call(pipeline, "applied", candidate.subject_id, candidate.candidate_id)
        assert stored is not None, f"candidate {candidate.candidate_id} was lost"
    ids = Counter(
        decode_record(value, expect=(SupersessionEvent,)).event_id  # type: ignore[union-attr]
        for _, value, _ in pipeline.read_committed(pipeline.catalogue.supersessions)
    )
    assert ids and max(ids.values()) == 1, "a supersession event was published twice"
    latest: dict[bytes | None, bytes | None] = {}
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.facts):
        latest[key] = value
    for subject in {c.subject_id for c in candidates}:
        facts = store_call(pipeline, "facts", subject, include_history=True)
        assert isinstance(facts, list)
        for fact in facts:
            assert decode_record(latest[fact.fact_id.encode()]) == fact, "facts topic != Redis"
