"""The local stack's services: how to start, check and stop each one on loopback.

A service runs detached, with a pid file and a log file under
``<data dir>/<service>/``; :mod:`slotwise.streams.dev.stack` brings them up and down
together.

    StackError              the stack could not be brought up, down or read
    ├── MissingTool         a program it needs is not installed (says what to install)
    ├── NotLocal            an address is not on this machine, so it cannot be started here
    └── ServiceFailed       a service did not become healthy (names the log file to read)
"""

from __future__ import annotations

import base64
import importlib.util
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Literal
from urllib.parse import urlsplit

import redis
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from slotwise.topics.connection import client_config
from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "KAFKA_VERSION",
    "REPO_ROOT",
    "Kafka",
    "Milvus",
    "MissingTool",
    "NotLocal",
    "Redis",
    "Service",
    "ServiceChange",
    "ServiceFailed",
    "ServiceStatus",
    "StackError",
    "address_of",
    "kafka_classpath_dir",
]

KAFKA_VERSION = "4.4.0"
REPO_ROOT = Path(__file__).resolve().parents[2]
_KAFKA_DEPLOY = REPO_ROOT / "deploy" / "local" / "kafka"
_LOOPBACK = {"localhost", "::1"}
_KAFKA_HEAP = ["-Xms256m", "-Xmx1g"]
# librdkafka logs every refused connection; a probe of a stopped broker expects them.
_quiet = logging.getLogger("slotwise.stack.probe")
_quiet.propagate = False
_quiet.addHandler(logging.NullHandler())
_JDK = "a JDK 17 or newer (Debian: apt-get install -y openjdk-17-jdk-headless)"
_MAVEN = "Apache Maven (Debian: apt-get install -y maven)"


class StackError(SlotwiseError, RuntimeError):
    pass


class MissingTool(StackError):
    pass


class NotLocal(StackError):
    pass


class ServiceFailed(StackError):
    def __init__(self, message: str, *, log_path: Path) -> None:
        super().__init__(f"{message}; read {log_path}")
        self.log_path = log_path


Action = Literal["started", "reused", "stopped", "not ours"]


@dataclass(frozen=True, slots=True)
class ServiceStatus:
    name: str
    address: str
    pid: int | None
    """The pid of the process this data dir started, or None when it did not start it."""
    healthy: bool
    log_path: Path
    engine: str | None = None
    """What answers, when a service can be one of several engines (Milvus: lite or server)."""

    @property
    def owner(self) -> str:
        if self.pid is not None:
            return str(self.pid)
        return "external" if self.healthy else "-"


@dataclass(frozen=True, slots=True)
class ServiceChange:
    status: ServiceStatus
    action: Action


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def local(self) -> bool:
        return self.host in _LOOPBACK or self.host.startswith("127.")

    def listening(self, timeout_s: float = 0.5) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=timeout_s):
                return True
        except OSError:
            return False


def address_of(url: str) -> Address:
    parts = urlsplit(url if "://" in url else f"tcp://{url}")
    if parts.hostname is None or parts.port is None:
        raise StackError(f"{url!r} names no host and port")
    return Address(parts.hostname, parts.port)


def _require(program: str, install: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise MissingTool(f"{program} is not on PATH; install it: {install}")
    return path


def _alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (exited, not yet reaped) counts as gone."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in {"Z", "X"}


def kafka_classpath_dir(version: str = KAFKA_VERSION) -> Path:
    """Where the broker's jars are cached, outside the source tree and shared by all data dirs."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "slotwise" / f"kafka-{version}" / "lib"


class Service(ABC):
    name: str
    marker: str
    """A word of the process's command line: a pid file pointing elsewhere is stale."""
    start_timeout_s: float

    def __init__(self, address: Address, data_dir: Path) -> None:
        self.address = address
        self.workdir = data_dir / self.name
        self.log_path = self.workdir / f"{self.name}.log"
        self.pid_path = self.workdir / f"{self.name}.pid"

    @abstractmethod
    def healthy(self) -> bool: ...

    @abstractmethod
    def command(self) -> list[str]: ...

    def preflight(self) -> None:
        """Raise :class:`MissingTool` now, before any service of the stack is started."""
        self.command()

    def prepare(self) -> None:  # noqa: B027 - most services need nothing before starting
        """Work before a start: fetch tools, write config, format storage."""

    def our_pid(self) -> int | None:
        try:
            pid = int(self.pid_path.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        return pid if self.marker.encode() in cmdline and _alive(pid) else None

    def status(self) -> ServiceStatus:
        healthy = self.address.listening() and self.healthy()
        engine = self.engine() if healthy else None
        return ServiceStatus(
            self.name, str(self.address), self.our_pid(), healthy, self.log_path, engine
        )

    def engine(self) -> str | None:
        """Which engine answers, for a service that can be more than one."""
        return None

    def start(self) -> int:
        if not self.address.local:
            raise NotLocal(f"{self.name} at {self.address} is not on this machine: start it there")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.prepare()
        with self.log_path.open("ab") as log:
            log.write(f"--- slotwise stack: starting {self.name} at {time.ctime()}\n".encode())
            log.flush()
            process = subprocess.Popen(
                self.command(),
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # survive the CLI (and its terminal) exiting
            )
        self.pid_path.write_text(f"{process.pid}\n")
        return process.pid

    def wait_healthy(self, pid: int | None) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.address.listening() and self.healthy():
                return
            if pid is not None and not _alive(pid):
                raise ServiceFailed(f"{self.name} exited while starting", log_path=self.log_path)
            time.sleep(0.25)
        raise ServiceFailed(
            f"{self.name} at {self.address} was not healthy after {self.start_timeout_s:.0f} s",
            log_path=self.log_path,
        )

    def stop(self, grace_s: float) -> bool:
        pid = self.our_pid()
        if pid is None:
            return False
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                # Our processes lead their own session: signal the group, helpers included.
                if os.getpgid(pid) == pid:
                    os.killpg(pid, sig)
                else:
                    os.kill(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + grace_s
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if not _alive(pid):
                break
        self.pid_path.unlink(missing_ok=True)
        return True


class Kafka(Service):
    name = "kafka"
    marker = "kafka.Kafka"
    start_timeout_s = 120.0

    def __init__(self, address: Address, data_dir: Path, version: str) -> None:
        super().__init__(address, data_dir)
        self.version = version
        self.lib = kafka_classpath_dir(version)
        self.properties = self.workdir / "server.properties"

    def healthy(self) -> bool:
        admin = AdminClient(client_config(str(self.address)), logger=_quiet)
        try:
            return bool(admin.list_topics(timeout=2).brokers)
        except KafkaException:
            return False

    def _java(self) -> list[str]:
        java = _require("java", _JDK)
        logging_config = _KAFKA_DEPLOY / "log4j2.properties"
        return [
            java,
            *_KAFKA_HEAP,
            f"-Dlog4j2.configurationFile={logging_config}",
            "-cp",
            str(self.lib / "*"),
        ]

    def command(self) -> list[str]:
        return [*self._java(), "kafka.Kafka", str(self.properties)]

    def preflight(self) -> None:
        super().preflight()
        if not self.lib.is_dir():
            _require("mvn", _MAVEN)

    def prepare(self) -> None:
        if not self.lib.is_dir():
            self._resolve_classpath()
        data = self.workdir / "data"
        template = Template((_KAFKA_DEPLOY / "server.properties").read_text())
        self.properties.write_text(
            template.substitute(
                host=self.address.host,
                broker_port=self.address.port,
                controller_port=self.address.port + 1,
                log_dirs=data,
            )
        )
        if not (data / "meta.properties").exists():
            self._format(data)

    def _resolve_classpath(self) -> None:
        mvn = _require("mvn", _MAVEN)
        staging = self.lib.with_name(f"lib.{os.getpid()}.partial")
        staging.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
        log = self.workdir / "maven.log"
        with log.open("wb") as out:
            done = subprocess.run(
                [
                    mvn,
                    "-q",
                    "-B",
                    "-Dstyle.color=never",
                    "-f",
                    str(_KAFKA_DEPLOY / "pom.xml"),
                    f"-Dkafka.version={self.version}",
                    f"-Dlib.dir={staging}",
                    "dependency:copy-dependencies",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
            )
        if done.returncode != 0 or not staging.is_dir():
            raise ServiceFailed(f"Maven could not resolve Kafka {self.version}", log_path=log)
        try:
            staging.rename(self.lib)  # atomic: a half-copied classpath is never used
        except OSError:
            if not self.lib.is_dir():
                raise
            shutil.rmtree(staging)  # another process resolved it first

    def _format(self, data: Path) -> None:
        # What Kafka's Uuid.randomUuid() prints; a leading '-' would read as a flag.
        cluster_id = "-"
        while cluster_id.startswith("-"):
            cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        with self.log_path.open("ab") as log:
            done = subprocess.run(
                [
                    *self._java(),
                    "kafka.tools.StorageTool",
                    "format",
                    "-t",
                    cluster_id,
                    "-c",
                    str(self.properties),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                check=False,
            )
        if done.returncode != 0:
            raise ServiceFailed("formatting Kafka's storage failed", log_path=self.log_path)


class Redis(Service):
    name = "redis"
    marker = "redis-server"
    start_timeout_s = 30.0

    def __init__(self, address: Address, data_dir: Path, url: str) -> None:
        super().__init__(address, data_dir)
        self.url = url

    def healthy(self) -> bool:
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1, socket_timeout=2)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def command(self) -> list[str]:
        server = _require("redis-server", "Debian: apt-get install -y redis-server")
        return [
            server,
            "--bind",
            self.address.host,
            "--port",
            str(self.address.port),
            "--dir",
            str(self.workdir),
            "--appendonly",
            "yes",
            "--save",
            "",
            "--daemonize",
            "no",
            "--logfile",
            "",
        ]


class Milvus(Service):
    name = "milvus"
    marker = "milvus_lite"
    start_timeout_s = 120.0

    def __init__(self, address: Address, data_dir: Path, uri: str) -> None:
        super().__init__(address, data_dir)
        self.uri = uri

    def healthy(self) -> bool:
        # pymilvus takes over a second to import: only `status` and `up` should pay for it.
        from pymilvus import MilvusClient  # noqa: PLC0415
        from pymilvus.exceptions import MilvusException  # noqa: PLC0415

        from slotwise.sinks.milvus.index import GRPC_OPTIONS  # noqa: PLC0415

        try:
            client = MilvusClient(self.uri, timeout=2, grpc_options=GRPC_OPTIONS)
        except MilvusException:
            return False
        try:
            client.list_collections()
            return True
        except MilvusException:
            return False
        finally:
            client.close()

    def engine(self) -> str | None:
        """``lite 3.2.2`` or ``server v2.3.5-lite`` (PyPI's standalone server calls itself
        that): what the Milvus at the URI reports, whoever started it."""
        from pymilvus import MilvusClient  # noqa: PLC0415
        from pymilvus.exceptions import MilvusException  # noqa: PLC0415

        from slotwise.sinks.milvus.engine import EngineTraits  # noqa: PLC0415

        try:
            client = MilvusClient(self.uri, timeout=2)
        except MilvusException:
            return None
        try:
            traits = EngineTraits.of_version(str(client.get_server_version(timeout=2)))
        except MilvusException:
            return None
        finally:
            client.close()
        return f"{traits.engine} {traits.version.removeprefix('milvus_lite-')}"

    def preflight(self) -> None:
        if importlib.util.find_spec("milvus_lite") is None:
            raise MissingTool(
                f"milvus-lite is not installed for {sys.executable}: pip install milvus-lite"
            )

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            # Lite's server, searching only the partition a filter's subject is in, as a
            # Milvus server does (streams/dev/milvus_lite_server.py).
            "slotwise.streams.dev.milvus_lite_server",
            "server",
            "--data-dir",
            str(self.workdir / "data"),
            "--host",
            self.address.host,
            "--port",
            str(self.address.port),
            # One RPC at a time. Milvus Lite 3.2's collection is not safe under concurrent
            # calls: its flush swaps in an empty memtable before the flushed segment is
            # visible, so a search during a flush (ours, or one a full memtable starts)
            # misses the rows of the memtable being written, and a replay would see other
            # neighbours than the first run did. Serialized, the server answered more
            # searches, not fewer, measured here (it is bound by one interpreter's lock).
            "--max-workers",
            "1",
        ]
