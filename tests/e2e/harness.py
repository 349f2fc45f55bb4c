"""Run real worker processes against the real stack, and watch what they committed.

The process handles, ports and committed offsets are :mod:`slotwise.streams.dev.testing`'s,
which the benchmarks share; this module adds what only the tests do with them.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from pydantic import BaseModel
from pymilvus import MilvusClient

from slotwise.sinks.milvus.index import GRPC_OPTIONS
from slotwise.streams.config import Settings
from slotwise.streams.dev.testing import (
    WorkerProcess,
    committed_offsets,
    drop_deployment,
    free_port,
    service_port,
)
from slotwise.streams.read.store import open_store
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import decode_record, encode_record
from slotwise.topics.records import CandidateFact, SupersessionEvent

__all__ = [
    "Pipeline",
    "WorkerProcess",
    "assert_exactly_once",
    "committed_values",
    "free_port",
    "latest_facts",
    "milvus_rows",
    "produce_contradictions",
    "redis_keys",
    "redis_state",
    "service_port",
    "store_call",
]

# How long every worker may be gone before a wait for commits gives up: a test that
# restarts its workers does so within this.
_GONE_S = 10.0


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

    @classmethod
    def named_by(cls, settings: Settings, log_dir: Path) -> Pipeline:
        """A pipeline under the names ``settings`` carry (a namespace's), not fresh ones."""
        if settings.milvus_alias != f"{settings.milvus_collection_prefix}_current":
            raise ValueError("a pipeline's Milvus alias is its collection prefix + '_current'")
        return cls(
            settings,
            settings.catalogue(),
            log_dir,
            group_id=settings.group_id,
            redis_prefix=settings.redis_prefix,
            milvus_alias=settings.milvus_alias,
        )

    @property
    def deployment(self) -> Settings:
        """What the workers run with: the stack's settings under the pipeline's names."""
        return self.settings.model_copy(
            update={
                "topic_prefix": self.catalogue.prefix,
                "partitions": self.catalogue.partitions,
                "group_id": self.group_id,
                "redis_prefix": self.redis_prefix,
                "milvus_alias": self.milvus_alias,
                "milvus_collection_prefix": self.milvus_alias.removesuffix("_current"),
                "commit_interval_ms": 100,
            }
        )

    @property
    def env(self) -> dict[str, str]:
        return {**self.deployment.to_env(), **self.extra_env}

    def worker(self, instance: str | None = None) -> WorkerProcess:
        name = instance or f"w{len(self.workers)}"
        log_path = self.log_dir / f"{self.group_id}-{name}.log"
        process = WorkerProcess(self.deployment, name, log_path, env=self.extra_env)
        self.workers.append(process)
        return process.start()

    def stop_all(self) -> None:
        for process in self.workers:
            if process.alive():
                process.stop(30)

    def drop(self) -> None:
        """Delete the pipeline's topics, Redis keys and Milvus collections and alias."""
        drop_deployment(self.deployment)

    def publish(
        self, topic: str, records: Iterable[BaseModel], *, base_timestamp_ms: int | None = None
    ) -> dict[int, int]:
        """Produce keyed by subject; returns, per partition, the offset after the last record.

        With ``base_timestamp_ms`` the i-th record carries that Kafka timestamp plus i, so
        two runs of the same input see the same event times.
        """
        producer = Producer(self.settings.librdkafka({"enable.idempotence": True, "linger.ms": 5}))
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
        producer = Producer(self.settings.librdkafka({"message.max.bytes": 16 * 1024 * 1024}))
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
        admin = AdminClient(self.settings.librdkafka())
        try:
            group = admin.describe_consumer_groups([self.group_id])[self.group_id].result(10)
        except Exception as exc:
            return f"group {self.group_id}: {exc!r}"
        lines = [f"group {self.group_id}: {group.state}"]
        for member in group.members:
            owned = sorted((tp.topic, tp.partition) for tp in member.assignment.topic_partitions)
            lines.append(f"  {member.group_instance_id or member.member_id}: {owned}")
        return "\n".join(lines)

    def wait_owns(self, instance: str, topic: str, timeout: float = 60.0) -> None:
        """Until the replica ``instance`` has been assigned a partition of ``topic``."""
        admin = AdminClient(self.settings.librdkafka())
        member_id = f"{self.group_id}-{instance}"

        def reached() -> tuple[bool, str]:
            try:
                group = admin.describe_consumer_groups([self.group_id])[self.group_id].result(10)
            except Exception as exc:  # a rebalance under way: ask again
                return False, f"group {self.group_id}: {exc!r}"
            owned = [
                tp
                for member in group.members
                if member.group_instance_id == member_id
                for tp in member.assignment.topic_partitions
                if tp.topic == topic
            ]
            return bool(owned), f"{member_id} owns no partition of {topic} yet"

        self._wait(reached, time.monotonic() + timeout, poll_s=0.2)

    def committed(self, topic: str, timeout: float = 60.0) -> dict[int, int]:
        """The group's committed offset per partition, waiting out a restarted broker."""
        return committed_offsets(
            self.settings, self.group_id, topic, self.catalogue.partitions, timeout=timeout
        )

    def wait_committed(self, topic: str, ends: dict[int, int], timeout: float = 120.0) -> None:
        """Until the group's committed offsets pass every record published (``ends``)."""
        deadline = time.monotonic() + timeout

        def reached() -> tuple[bool, str]:
            # A worker killed mid-transaction leaves its offsets pending until the broker
            # aborts the transaction (transaction.timeout.ms, 60 s): the group's offsets
            # cannot be read until then, which is part of what this waits out.
            committed = self.committed(topic, timeout=max(deadline - time.monotonic(), 10.0))
            done = all(committed.get(p, -1) >= end for p, end in ends.items())
            return done, f"committed {committed} never reached {ends}"

        self._wait(reached, deadline, poll_s=0.25)

    def wait_some_committed(self, minimum: int, timeout: float = 180.0) -> None:
        """Until the group has committed at least ``minimum`` candidates."""

        def reached() -> tuple[bool, str]:
            done = sum(max(0, o) for o in self.committed(self.catalogue.candidates).values())
            return done >= minimum, f"only {done} of {minimum} candidates committed"

        self._wait(reached, time.monotonic() + timeout, poll_s=0.2)

    def _wait(
        self, reached: Callable[[], tuple[bool, str]], deadline: float, poll_s: float
    ) -> None:
        """Poll ``reached`` until it holds; past ``deadline``, or once every worker started
        has been gone for a while (nothing can commit any more), fail with the diagnosis."""
        stopped_at: float | None = None
        while True:
            done, shortfall = reached()
            if done:
                return
            now = time.monotonic()
            stopped = bool(self.workers) and not any(w.alive() for w in self.workers)
            stopped_at = (stopped_at or now) if stopped else None
            if stopped_at is not None and now - stopped_at > _GONE_S:
                raise TimeoutError(f"{shortfall}, and every worker has exited:\n{self.diagnose()}")
            if now > deadline:
                raise TimeoutError(f"{shortfall} in time:\n{self.diagnose()}")
            time.sleep(poll_s)

    def read_committed(
        self, topic: str, idle_s: float = 2.0
    ) -> list[tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]]:
        """Every committed message of a topic, from the beginning to the end."""
        consumer = Consumer(
            self.settings.librdkafka(
                {
                    "group.id": f"r-{uuid.uuid4().hex}",
                    "enable.auto.commit": False,
                    "isolation.level": "read_committed",
                    "auto.offset.reset": "earliest",
                }
            )
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
        store = open_store(pipeline.settings, prefix=pipeline.redis_prefix)
        try:
            return await getattr(store, method)(*args, **kwargs)
        finally:
            await store.close()

    return asyncio.run(call())


def produce_contradictions(
    settings: Settings,
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
    producer = Producer(settings.librdkafka({"enable.idempotence": True, "linger.ms": 1}))
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
            published = decode_record(latest[fact.fact_id.encode()])
            assert published == fact, f"facts topic != Redis:\n{published!r}\n{fact!r}"


def redis_state(pipeline: Pipeline, *, ignore: Sequence[str] = ()) -> dict[str, object]:
    """Every key under the pipeline's prefix (the prefix cut off) with its content, but
    the kinds in ``ignore`` (``:replica-ack``)."""
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    state: dict[str, object] = {}
    try:
        for key in client.scan_iter(match=f"{pipeline.redis_prefix}:*", count=1000):
            name = key.decode().removeprefix(pipeline.redis_prefix)
            # The commit marks are keyed by the group, which differs between runs.
            if name in ignore or name.startswith(":commits:"):
                continue
            kind = client.type(key)
            if kind == b"hash":
                state[name] = client.hgetall(key)
            elif kind == b"zset":
                state[name] = client.zrange(key, 0, -1, withscores=True)
            elif kind == b"string":
                state[name] = client.get(key)
            elif kind == b"set":
                state[name] = client.smembers(key)
            else:
                state[name] = kind
    finally:
        client.close()
    assert state, "nothing in Redis"
    return state


def assert_same_state(
    got: dict[str, object], want: dict[str, object], labels: tuple[str, str]
) -> None:
    """``got == want`` for two :func:`redis_state` reads, or a failure naming what differs."""
    assert got == want, _state_diff(got, want, labels)


def _state_diff(
    got: dict[str, object], want: dict[str, object], labels: tuple[str, str], limit: int = 10
) -> str:
    """The keys that differ, and in a hash the fields that do: what a failure shows,
    after a count of the keys only one side has (a lost subject shows as many)."""
    only = [len(got.keys() - want.keys()), len(want.keys() - got.keys())]
    lines = [f"keys only in {labels[0]}: {only[0]}, only in {labels[1]}: {only[1]}"]
    for key in sorted(got.keys() | want.keys()):
        a, b = got.get(key), want.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for field in sorted(a.keys() | b.keys()):
                if a.get(field) != b.get(field):
                    lines.append(f"{key} {field!r}:\n  {a.get(field)!r}\n  {b.get(field)!r}")
        else:
            lines.append(f"{key}:\n  {a!r}\n  {b!r}")
    more = f"\n... {len(lines) - limit} more" if len(lines) > limit else ""
    return f"({labels[0]}, then {labels[1]}) " + "\n".join(lines[:limit]) + more


def milvus_rows(pipeline: Pipeline) -> dict[str, tuple[object, ...]]:
    client = MilvusClient(uri=pipeline.settings.milvus_uri, grpc_options=GRPC_OPTIONS)
    rows: dict[str, tuple[object, ...]] = {}
    try:
        fields = ["fact_id", "subject_id", "text", "embedding_model", "category"]
        subjects = {k.decode().split("{")[1].split("}")[0] for k in redis_keys(pipeline)}
        for subject in sorted(subjects):
            for row in client.query(
                pipeline.milvus_alias,
                filter=f'subject_id == "{subject}"',
                output_fields=fields,
                limit=16384,
            ):
                rows[row["fact_id"]] = tuple(row[f] for f in fields[1:])
    finally:
        client.close()
    assert rows, "nothing in Milvus"
    return rows


def redis_keys(pipeline: Pipeline) -> list[bytes]:
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    try:
        return list(client.scan_iter(match=f"{pipeline.redis_prefix}:*:meta", count=1000))
    finally:
        client.close()


def committed_values(pipeline: Pipeline, topic: str) -> list[bytes]:
    return [v or b"" for _, v, _ in pipeline.read_committed(topic, idle_s=3.0)]


def latest_facts(pipeline: Pipeline) -> dict[bytes | None, bytes | None]:
    latest: dict[bytes | None, bytes | None] = {}
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.facts, idle_s=3.0):
        latest[key] = value
    return latest
