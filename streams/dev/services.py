"""What every local stack service shares: how to start, check and stop one on loopback.

A service runs detached, with a pid file and a log file under
``<data dir>/<service>/``; each engine says how to run it (``kafka_broker``,
``redis_server``, ``milvus_lite``, ``milvus_server``) and
:mod:`slotwise.streams.dev.stack` brings them up and down together.

    StackError              the stack could not be brought up, down or read
    ├── MissingTool         a program it needs is not installed (says what to install)
    ├── NotLocal            an address is not on this machine, so it cannot be started here
    └── ServiceFailed       a service did not become healthy (names the log file to read)
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "REPO_ROOT",
    "MissingTool",
    "NotLocal",
    "Service",
    "ServiceChange",
    "ServiceFailed",
    "ServiceStatus",
    "StackError",
    "address_of",
    "require_program",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
_LOOPBACK = {"localhost", "::1"}


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


def require_program(program: str, install: str) -> str:
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
