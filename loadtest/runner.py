"""The processes a benchmark run starts, and what it watches while they work.

A :class:`Bench` is one scenario run's private world on the shared local
stack: topics under a fresh prefix, a consumer group, a Redis key prefix and a
Milvus alias and collection prefix of its own, so runs never read each other's
state, and everything it created is removed when it closes. Worker replicas
(``python -m slotwise.streams worker``) and the fake model (``python -m
slotwise.loadtest.responders``) run as their own processes, as in production,
and are stopped in ``close`` whatever happened. The process handles and the
committed offsets come from :mod:`slotwise.streams.dev.testing`, which the
end-to-end tests share.

While they work, a run watches from outside, as a client would:

* :class:`WatermarkListener` — Redis publishes every observation a worker
  applies (the read-your-writes watermark); the listener notes when each
  arrived;
* :class:`SupersessionListener` — the supersessions topic, ``read_committed``,
  as a subscriber sees it;
* :class:`RssSampler` — the worker's resident set, every few seconds;
* :meth:`Bench.committed` — the group's committed offsets, i.e. how far the
  worker's transactions have got.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import redis
from confluent_kafka import Consumer, KafkaException, TopicPartition

from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.sinks.redis.keys import META, OBSERVATIONS, OBSERVED, KeyLayout
from slotwise.streams.config import Settings
from slotwise.streams.dev.testing import (
    ChildProcess,
    WorkerProcess,
    committed_offsets,
    drop_deployment,
    free_port,
    metric_total,
)
from slotwise.topics.codec import decode_record
from slotwise.topics.exceptions import RecordError, SlotwiseError
from slotwise.topics.records import SupersessionEvent

__all__ = [
    "Bench",
    "BenchError",
    "FakeModelProcess",
    "RssSampler",
    "SupersessionListener",
    "WatermarkListener",
    "WorkerProcess",
    "cpu_seconds",
    "free_port",
    "metric_total",
    "rss_bytes",
]


class BenchError(SlotwiseError, RuntimeError):
    """A benchmark process failed to start, died, or never got where it had to."""


def rss_bytes(pid: int) -> int | None:
    """Resident set size of a process (``VmRSS``), or None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return None


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) a process has used, or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # utime and stime are fields 14 and 15 of stat(5); the split starts at field 3.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class FakeModelProcess(ChildProcess):
    """The fake Messages API (``python -m slotwise.loadtest.responders``) on its own port."""

    def __init__(self, argv: Sequence[str], log_path: Path, port: int) -> None:
        super().__init__(argv, log_path, name="the fake model")
        self.port = port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_listening(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise BenchError(f"the fake model did not listen on {self.port}:\n{self.log_tail()}")


@dataclass
class Bench:
    """One run's topics, group, Redis prefix and Milvus collections, and its processes."""

    settings: Settings
    workdir: Path
    partitions: int = 12
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    spawned: list[ChildProcess] = field(default_factory=list)

    def __post_init__(self) -> None:
        # The run's private world: the stack's settings under names of its own.
        self.deployment = self.settings.model_copy(
            update={
                "topic_prefix": f"bench-{self.run_id}",
                "partitions": self.partitions,
                "group_id": f"bench-{self.run_id}",
                "redis_prefix": f"bench{self.run_id}",
                "milvus_collection_prefix": f"bench{self.run_id}",
                "milvus_alias": f"bench{self.run_id}_current",
            }
        )
        self.catalogue = self.deployment.catalogue()
        self.group_id = self.deployment.group_id
        self.redis_prefix = self.deployment.redis_prefix
        self.milvus_prefix = self.deployment.milvus_collection_prefix
        self.milvus_alias = self.deployment.milvus_alias
        self.workdir.mkdir(parents=True, exist_ok=True)

    def __enter__(self) -> Bench:
        ensure_topics(
            self.deployment.librdkafka(), self.catalogue, self.deployment.replication_factor
        )
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- processes ------------------------------------------------------------

    def worker(self, instance: str = "w0", env: Mapping[str, str] | None = None) -> WorkerProcess:
        log_path = self.workdir / f"{self.group_id}-{instance}.log"
        process = WorkerProcess(self.deployment, instance, log_path, env=env, log_level="WARNING")
        self.spawned.append(process)
        return process.start()

    def fake_model(self, latency_ms: float, responder: str) -> FakeModelProcess:
        port = free_port()
        process = FakeModelProcess(
            [sys.executable, "-m", "slotwise.loadtest.responders", "--port", str(port),
             "--latency-ms", str(latency_ms), "--responder", responder],
            self.workdir / f"{self.group_id}-fake-model.log",
            port,
        )  # fmt: skip
        self.spawned.append(process)
        process.start().wait_listening()
        return process

    def model_env(self, model: FakeModelProcess, concurrency: int) -> dict[str, str]:
        """What points a worker at the fake model with ``concurrency`` calls in flight."""
        return {
            "SLOTWISE_ANTHROPIC_API_KEY": "bench",
            "SLOTWISE_ANTHROPIC_BASE_URL": model.base_url,
            "SLOTWISE_LLM_MAX_CONCURRENCY": str(concurrency),
        }

    # -- watching ---------------------------------------------------------------

    def committed(self, topic: str) -> dict[int, int]:
        """The group's committed offset per partition (-1001 where none yet)."""
        return committed_offsets(self.deployment, self.group_id, topic, self.partitions)

    def committed_count(self, topic: str) -> int:
        """Records the group has committed past, over all partitions (offsets start at 0)."""
        return sum(max(0, offset) for offset in self.committed(topic).values())

    def watermarked(self, turns: Mapping[str, Sequence[str]]) -> int:
        """Observations applied, each subject's counted up to its watermark.

        ``turns`` lists each subject's observation ids in log order. The watermark is
        the last observation a subject has applied, and its observations apply in
        order, so its position says how many are done; unlike the watermark index
        (:meth:`applied_observations`), it holds for turns dated months apart, which
        the index prunes by event time.
        """
        client = redis.Redis.from_url(self.settings.redis_url)
        try:
            pipe = client.pipeline(transaction=False)
            layout = KeyLayout(self.redis_prefix)
            subjects = list(turns)
            for subject in subjects:
                pipe.hget(layout.key(subject, META), "watermark")
            done = 0
            for subject, mark in zip(subjects, pipe.execute(), strict=True):
                if mark is not None:
                    done += turns[subject].index(mark.decode()) + 1
            return done
        finally:
            client.close()

    def applied_observations(self, subjects: Iterable[str]) -> int:
        """Observations whose watermark is in Redis, over ``subjects``."""
        client = redis.Redis.from_url(self.settings.redis_url)
        try:
            pipe = client.pipeline(transaction=False)
            layout = KeyLayout(self.redis_prefix)
            for subject in subjects:
                pipe.zcard(layout.key(subject, OBSERVATIONS))
            return sum(int(n) for n in pipe.execute())
        finally:
            client.close()

    # -- cleaning up ------------------------------------------------------------

    def close(self) -> None:
        try:
            for process in reversed(self.spawned):
                process.stop()
        finally:
            self.spawned.clear()
            drop_deployment(self.deployment)


class WatermarkListener:
    """When each observation's watermark was published by Redis, as ``time.time()``."""

    def __init__(self, redis_url: str, redis_prefix: str) -> None:
        self.seen: dict[str, float] = {}
        self._client = redis.Redis.from_url(redis_url)
        self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        self._pubsub.psubscribe(KeyLayout(redis_prefix).kind_pattern(OBSERVED))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="watermarks", daemon=True)

    def start(self) -> WatermarkListener:
        self._thread.start()
        return self

    def _listen(self) -> None:
        while not self._stop.is_set():
            message = self._pubsub.get_message(timeout=0.2)
            if message is not None and message["type"] == "pmessage":
                self.seen.setdefault(message["data"].decode(), time.time())

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._pubsub.close()
        self._client.close()


class SupersessionListener:
    """Every committed supersession event: when it became visible, by observation id."""

    def __init__(self, settings: Settings, topic: str, partitions: int) -> None:
        self.seen: dict[str, float] = {}
        self.events = 0
        self._consumer = Consumer(settings.librdkafka({
            "group.id": f"bench-supersessions-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }))  # fmt: skip
        self._consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="supersessions", daemon=True)

    def start(self) -> SupersessionListener:
        self._thread.start()
        return self

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                messages = self._consumer.consume(500, 0.2)
            except KafkaException:
                continue
            now = time.time()
            for message in messages:
                if message.error() is not None:
                    continue
                try:
                    event = decode_record(message.value(), expect=(SupersessionEvent,))
                except RecordError:
                    continue
                self.events += 1
                if isinstance(event, SupersessionEvent) and event.observation_id:
                    self.seen.setdefault(event.observation_id, now)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._consumer.close()


class RssSampler:
    """A process's resident set every ``every_s``: ``(seconds since start, bytes)``."""

    def __init__(self, pid: int, every_s: float = 2.0) -> None:
        self.samples: list[tuple[float, int]] = []
        self._pid = pid
        self._every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="rss", daemon=True)

    def start(self) -> RssSampler:
        self._thread.start()
        return self

    def _sample(self) -> None:
        started = time.monotonic()
        while True:
            rss = rss_bytes(self._pid)
            if rss is not None:
                self.samples.append((time.monotonic() - started, rss))
            if self._stop.wait(self._every_s):
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
