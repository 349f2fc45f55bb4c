"""Worker processes and their state on the stack, watched from outside as a client would.

The end-to-end tests (``tests/e2e/harness.py``) and the benchmarks
(:mod:`slotwise.loadtest.runner`) both run real ``python -m slotwise.streams
worker`` processes against the real Kafka, Redis and Milvus, and follow them
through ``/healthz``, ``/metrics``, the group's committed offsets and the log.
This module is that plumbing, once. It ships in the package, as Bytewax's
``testing`` module does, because the benchmarks must not import ``tests``; no
production process uses it.

* :func:`free_port`, :func:`service_port` — ports to listen on;
* :class:`ChildProcess` — a child with its output in a log file;
  :class:`WorkerProcess` — one worker replica, configured by a :class:`Settings`;
* :func:`metric_total` — a sum over the samples :meth:`WorkerProcess.metrics` read;
* :func:`committed_offsets` — a group's committed offsets, waiting out a
  coordinator that moves (a restarted broker);
* :func:`drop_deployment` — delete what a test's or a benchmark's names hold.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Self

import grpc
import redis
from confluent_kafka import Consumer, TopicPartition
from pymilvus import MilvusClient, MilvusException

from slotwise.sinks.kafka.admin import delete_topics
from slotwise.sinks.milvus.index import GRPC_OPTIONS
from slotwise.streams.config import Settings
from slotwise.streams.runtime import positions
from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "ChildProcess",
    "NotHealthy",
    "ProcessError",
    "WorkerProcess",
    "committed_offsets",
    "drop_deployment",
    "free_port",
    "metric_total",
    "service_port",
]

_METRIC = re.compile(r"^(?P<name>[a-z_]+)(?:\{(?P<labels>[^}]*)\})? (?P<value>[-0-9.e+naif]+)$")
# The names a deployment's state lives under; their defaults are a developer's own data.
_NAMES = ("topic_prefix", "redis_prefix", "milvus_collection_prefix", "milvus_alias")
_MILVUS_ATTEMPTS = 5


class ProcessError(SlotwiseError, RuntimeError):
    """A child process was never started, or exited while it was expected to run."""


class NotHealthy(ProcessError, TimeoutError):
    """A worker did not answer ``/healthz`` with 200 in time."""


def free_port() -> int:
    """A port nothing listens on now (from the ephemeral range)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Ports service_port handed out in this process: several are picked before any of
# their services binds (a primary and its replicas), so "free now" is not enough.
_HANDED_OUT: set[int] = set()
_HANDED_OUT_LOCK = threading.Lock()


def service_port(span: int = 1) -> int:
    """A free port (and the ``span - 1`` after it) below the ephemeral range, for a
    service restarted mid-test: by the time it binds again, a client connection may
    hold any ephemeral port. Never one this process was given before."""
    rng = random.Random()
    while True:
        port = rng.randrange(20_000, 32_000)
        wanted = set(range(port, port + span))
        with _HANDED_OUT_LOCK:
            if wanted & _HANDED_OUT:
                continue
            try:
                with contextlib.ExitStack() as held:
                    for offset in range(span):
                        held.enter_context(socket.socket()).bind(("127.0.0.1", port + offset))
            except OSError:
                continue
            _HANDED_OUT.update(wanted)
        return port


class ChildProcess:
    """A child process with its output in a log file; stopped by SIGTERM, then SIGKILL."""

    def __init__(
        self,
        argv: Sequence[str],
        log_path: Path,
        *,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        self.argv = list(argv)
        self.env = dict(env or {})  # on top of this process's environment
        self.log_path = log_path
        self.name = name or " ".join(self.argv)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.argv, env={**os.environ, **self.env}, stdout=log, stderr=subprocess.STDOUT
            )
        return self

    @property
    def pid(self) -> int:
        return self._started().pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def check_alive(self) -> None:
        """Raise :class:`ProcessError` with the log's tail if it was started and has exited."""
        if self.process is not None and self.process.poll() is not None:
            raise ProcessError(
                f"{self.name} exited with {self.process.returncode}:\n{self.log_tail()}"
            )

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        process = self._started()
        process.kill()
        process.wait(10)

    def pause(self) -> None:
        """SIGSTOP: it holds its connections and answers nothing, as a hung host."""
        self._started().send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._started().send_signal(signal.SIGCONT)

    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM, then SIGKILL if it has not exited within ``timeout``; its exit status."""
        process = self._started()
        process.terminate()
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait(10)

    def stop(self, timeout: float = 60.0) -> int | None:
        """:meth:`terminate` if it was ever started (None if not)."""
        return None if self.process is None else self.terminate(timeout)

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _started(self) -> subprocess.Popen[bytes]:
        if self.process is None:
            raise ProcessError(f"{self.name} was never started")
        return self.process


class WorkerProcess(ChildProcess):
    """One ``python -m slotwise.streams worker`` replica with a metrics port of its own.

    It runs with ``settings`` (as ``SLOTWISE_*`` variables, :meth:`Settings.to_env`),
    then ``env`` on top, then its port as ``SLOTWISE_METRICS_PORT``.
    """

    def __init__(
        self,
        settings: Settings,
        instance: str,
        log_path: Path,
        *,
        env: Mapping[str, str] | None = None,
        port: int | None = None,
        log_level: str | None = None,
    ) -> None:
        self.settings = settings
        self.instance = instance
        self.port = free_port() if port is None else port
        argv = [sys.executable, "-m", "slotwise.streams", "worker", "--instance", instance]
        if log_level is not None:
            argv += ["--log-level", log_level]
        env = {**settings.to_env(), **(env or {}), "SLOTWISE_METRICS_PORT": str(self.port)}
        super().__init__(argv, log_path, env=env, name=f"worker {instance}")

    def health(self) -> int | None:
        """The status ``/healthz`` answers, or None while nothing listens."""
        answer = self._get("/healthz", timeout=2)
        return None if answer is None else answer[0]

    def wait_healthy(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            if self.health() == 200:
                return
            time.sleep(0.2)
        raise NotHealthy(f"{self.name} not healthy in {timeout:.0f} s:\n{self.log_tail()}")

    def metrics(self) -> dict[str, float]:
        """Every sample of the worker's ``/metrics``, keyed ``name{labels}`` ({} if unreachable)."""
        answer = self._get("/metrics", timeout=5)
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

    def events_in(self) -> float:
        """Records this process consumed, from its metrics."""
        return metric_total(self.metrics(), "slotwise_events_in_total")

    def request_stacks(self) -> None:
        """Ask the worker to log its threads' and tasks' stacks (``runtime/diagnostics.py``)."""
        if self.process is not None and self.alive():
            self.process.send_signal(signal.SIGUSR1)

    def _get(self, path: str, timeout: float) -> tuple[int, bytes] | None:
        url = f"http://127.0.0.1:{self.port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                return int(response.status), response.read()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read()
        except OSError:
            return None


def metric_total(samples: Mapping[str, float], name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = [f'{k}="{v}"' for k, v in labels.items()]
    total = 0.0
    for key, value in samples.items():
        base, _, rest = key.partition("{")
        if base == name and all(w in rest for w in wanted):
            total += value
    return total


def committed_offsets(
    settings: Settings, group_id: str, topic: str, partitions: int, *, timeout: float = 60.0
) -> dict[int, int]:
    """The group's committed offset per partition of ``topic`` (-1001 where none yet).

    What keeps them unreadable for a while (a restarted broker's coordinator moving,
    a killed worker's open transaction) is waited out for ``timeout``
    (``streams/runtime/positions.py``).
    """
    consumer = Consumer(settings.librdkafka({"group.id": group_id, "enable.auto.commit": False}))
    wanted = [TopicPartition(topic, p) for p in range(partitions)]
    try:
        committed = positions.committed_offsets(consumer, wanted, wait_s=timeout)
        return {partition: offset for (_, partition), offset in committed.items()}
    finally:
        consumer.close()


def drop_deployment(settings: Settings) -> None:
    """Delete what a deployment's names hold: its topics, the Redis keys under its
    prefix, its Milvus alias and collections.

    For a test's or a benchmark's own names: it refuses the default ones.
    """
    defaults = [n for n in _NAMES if getattr(settings, n) == Settings.model_fields[n].default]
    if defaults:
        raise ValueError(f"{', '.join(defaults)}: the defaults are not a test's to delete")
    delete_topics(settings.librdkafka(), [spec.name for spec in settings.catalogue().specs()])
    _drop_redis(settings)
    _drop_milvus(settings)


def _drop_redis(settings: Settings) -> None:
    client = redis.Redis.from_url(settings.redis_url)
    try:
        batch: list[bytes] = []
        for key in client.scan_iter(match=f"{settings.redis_prefix}:*", count=5_000):
            batch.append(key)
            if len(batch) >= 5_000:
                client.unlink(*batch)
                batch.clear()
        if batch:
            client.unlink(*batch)
    finally:
        client.close()


def _drop_milvus(settings: Settings) -> None:
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else ""
    for attempt in range(_MILVUS_ATTEMPTS):
        client = None
        try:
            client = MilvusClient(uri=settings.milvus_uri, token=token, grpc_options=GRPC_OPTIONS)
            if settings.milvus_alias in client.list_aliases().get("aliases", []):
                client.drop_alias(settings.milvus_alias)
            for name in client.list_collections():
                if name.startswith(f"{settings.milvus_collection_prefix}_"):
                    client.drop_collection(name)
            return
        except (MilvusException, grpc.RpcError):
            # A busy Milvus Lite server drops channels and misses deadlines now and then.
            if attempt == _MILVUS_ATTEMPTS - 1:
                raise
            time.sleep(3)
        finally:
            if client is not None:
                client.close()
