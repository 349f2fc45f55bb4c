"""The processes a benchmark run starts, and what it watches while they work.

A :class:`Bench` is one scenario run's private world on the shared local
stack: topics under a fresh prefix, a consumer group, a Redis key prefix and a
Milvus alias and collection prefix of its own, so runs never read each other's
state, and everything it created is removed when it closes. Worker replicas
(``python -m streams worker``) and the fake model (``python -m
loadtest.responders``) run as their own processes, as in production, and
are stopped in ``close`` whatever happened.

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
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import redis
from confluent_kafka import Consumer, KafkaException, TopicPartition
from pymilvus import MilvusClient, MilvusException

from sinks.milvus_index import GRPC_OPTIONS
from streams.settings import Settings
from topics.admin import delete_topics, ensure_topics
from topics.catalogue import Catalogue
from topics.codec import decode_record
from topics.exceptions import RecordError
from topics.records import SupersessionEvent

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
    "rss_bytes",
]

_METRIC = re.compile(r"^(?P<name>[a-z_]+)(?:\{(?P<labels>[^}]*)\})? (?P<value>[-0-9.e+naif]+)$")


class BenchError(RuntimeError):
    """A benchmark process failed to start, died, or never got where it had to."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


@dataclass
class _Spawned:
    """A child process with its output in a log file; stopped by SIGTERM, then SIGKILL."""

    argv: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.argv, env={**os.environ, **self.env}, stdout=log, stderr=subprocess.STDOUT
            )

    @property
    def pid(self) -> int:
        if self.process is None:
            raise BenchError(f"{self.argv} was never started")
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise BenchError(
                f"{' '.join(self.argv[2:])} exited with {self.process.returncode}:\n"
                f"{self.log_tail()}"
            )

    def stop(self, timeout_s: float = 60.0) -> int | None:
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(10)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@dataclass
class WorkerProcess(_Spawned):
    """``python -m streams worker``, its metrics and health on a port of its own."""

    instance: str = "w0"
    port: int = 0

    def get(self, path: str) -> tuple[int, bytes] | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return int(r.status), r.read()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read()
        except OSError:
            return None

    def wait_healthy(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check_alive()
            answer = self.get("/healthz")
            if answer is not None and answer[0] == 200:
                return
            time.sleep(0.2)
        raise BenchError(
            f"worker {self.instance} not healthy in {timeout_s:.0f} s:\n{self.log_tail()}"
        )

    def metrics(self) -> dict[str, float]:
        """Every sample of the worker's ``/metrics``, keyed ``name{labels}``."""
        answer = self.get("/metrics")
        if answer is None or answer[0] != 200:
            return {}
        samples: dict[str, float] = {}
        for line in answer[1].decode().splitlines():
            found = _METRIC.match(line)
            if found is not None:
                labels = found["labels"]
                key = f"{found['name']}{{{labels}}}" if labels else found["name"]
                samples[key] = float(found["value"])
        return samples


@dataclass
class FakeModelProcess(_Spawned):
    """The fake Messages API (``python -m loadtest.responders``) on its own port."""

    port: int = 0

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


def metric_total(samples: Mapping[str, float], name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = [f'{k}="{v}"' for k, v in labels.items()]
    total = 0.0
    for key, value in samples.items():
        base, _, rest = key.partition("{")
        if base == name and all(w in rest for w in wanted):
            total += value
    return total


@dataclass
class Bench:
    """One run's topics, group, Redis prefix and Milvus collections, and its processes."""

    settings: Settings
    workdir: Path
    partitions: int = 12
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    spawned: list[_Spawned] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.catalogue = Catalogue(prefix=f"bench-{self.run_id}", partitions=self.partitions)
        self.group_id = f"bench-{self.run_id}"
        self.redis_prefix = f"bench{self.run_id}"
        self.milvus_prefix = f"bench{self.run_id}"
        self.workdir.mkdir(parents=True, exist_ok=True)

    @property
    def milvus_alias(self) -> str:
        return f"{self.milvus_prefix}_current"

    def env(self) -> dict[str, str]:
        return {
            "SLOTWISE_KAFKA_BOOTSTRAP": self.settings.kafka_bootstrap,
            "SLOTWISE_REDIS_URL": self.settings.redis_url,
            "SLOTWISE_MILVUS_URI": self.settings.milvus_uri,
            "SLOTWISE_TOPIC_PREFIX": self.catalogue.prefix,
            "SLOTWISE_PARTITIONS": str(self.partitions),
            "SLOTWISE_GROUP_ID": self.group_id,
            "SLOTWISE_REDIS_PREFIX": self.redis_prefix,
            "SLOTWISE_MILVUS_ALIAS": self.milvus_alias,
            "SLOTWISE_MILVUS_COLLECTION_PREFIX": self.milvus_prefix,
        }

    def __enter__(self) -> Bench:
        ensure_topics(
            self.settings.kafka_bootstrap, self.catalogue, self.settings.replication_factor
        )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- processes ------------------------------------------------------------

    def worker(self, instance: str = "w0", env: Mapping[str, str] | None = None) -> WorkerProcess:
        port = free_port()
        process = WorkerProcess(
            argv=[
                sys.executable,
                "-m",
                "streams",
                "worker",
                "--instance",
                instance,
                "--log-level",
                "WARNING",
            ],
            env={**self.env(), **(env or {}), "SLOTWISE_METRICS_PORT": str(port)},
            log_path=self.workdir / f"{self.group_id}-{instance}.log",
            instance=instance,
            port=port,
        )
        self.spawned.append(process)
        process.start()
        return process

    def fake_model(self, latency_ms: float, responder: str) -> FakeModelProcess:
        port = free_port()
        process = FakeModelProcess(
            argv=[
                sys.executable,
                "-m",
                "loadtest.responders",
                "--port",
                str(port),
                "--latency-ms",
                str(latency_ms),
                "--responder",
                responder,
            ],
            env={},
            log_path=self.workdir / f"{self.group_id}-fake-model.log",
            port=port,
        )
        self.spawned.append(process)
        process.start()
        process.wait_listening()
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
        consumer = Consumer({
            "bootstrap.servers": self.settings.kafka_bootstrap,
            "group.id": self.group_id,
            "enable.auto.commit": False,
        })  # fmt: skip
        try:
            partitions = [TopicPartition(topic, p) for p in range(self.partitions)]
            return {tp.partition: tp.offset for tp in consumer.committed(partitions, timeout=10)}
        finally:
            consumer.close()

    def committed_count(self, topic: str) -> int:
        """Records the group has committed past, over all partitions (offsets start at 0)."""
        return sum(max(0, offset) for offset in self.committed(topic).values())

    def applied_observations(self, subjects: Iterable[str]) -> int:
        """Observations whose watermark is in Redis, over ``subjects``."""
        client = redis.Redis.from_url(self.settings.redis_url)
        try:
            pipe = client.pipeline(transaction=False)
            for subject in subjects:
                pipe.zcard(_subject_key(self.redis_prefix, subject, "observations"))
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
            delete_topics(
                self.settings.kafka_bootstrap, [spec.name for spec in self.catalogue.specs()]
            )
            self._drop_redis()
            self._drop_milvus()

    def _drop_redis(self) -> None:
        client = redis.Redis.from_url(self.settings.redis_url)
        try:
            batch: list[bytes] = []
            for key in client.scan_iter(match=f"{self.redis_prefix}:*", count=5_000):
                batch.append(key)
                if len(batch) >= 5_000:
                    client.unlink(*batch)
                    batch.clear()
            if batch:
                client.unlink(*batch)
        finally:
            client.close()

    def _drop_milvus(self) -> None:
        for attempt in range(5):
            try:
                client = MilvusClient(uri=self.settings.milvus_uri, grpc_options=GRPC_OPTIONS)
            except MilvusException:
                if attempt == 4:
                    raise
                time.sleep(3)  # a busy Milvus Lite server can miss a connection deadline
                continue
            try:
                if self.milvus_alias in client.list_aliases().get("aliases", []):
                    client.drop_alias(self.milvus_alias)
                for name in client.list_collections():
                    if name.startswith(f"{self.milvus_prefix}_"):
                        client.drop_collection(name)
                return
            except MilvusException:
                if attempt == 4:
                    raise
                time.sleep(3)
            finally:
                client.close()


def _subject_key(prefix: str, subject: str, kind: str) -> str:
    # The generator's subject ids are plain (letters, digits, dashes): no escaping needed.
    return f"{prefix}:{{{subject}}}:{kind}"


class WatermarkListener:
    """When each observation's watermark was published by Redis, as ``time.time()``."""

    def __init__(self, redis_url: str, redis_prefix: str) -> None:
        self.seen: dict[str, float] = {}
        self._client = redis.Redis.from_url(redis_url)
        self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
        self._pubsub.psubscribe(f"{redis_prefix}:*:observed")
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

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.seen: dict[str, float] = {}
        self.events = 0
        self._consumer = Consumer({
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-supersessions-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        })  # fmt: skip
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
