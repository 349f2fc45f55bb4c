"""The local stack: one Kafka broker, Redis and a Milvus (Lite, or a server) on loopback.

``up`` starts what is missing and reuses whatever already answers on a
service's port, so it is safe to run from a shell, from CI and from every test
session at once. What it starts runs detached (``services.py``); ``down``
stops only those. The Milvus engine it started is recorded in the data dir, so
``down`` and ``status`` without a flag act on whichever runs. Likewise a data
dir brought up ``secure`` (``security.py``: TLS, SCRAM and Redis ACL users,
Kafka ACLs from ``kafka_security.py``) stays secure: its secrets are its record.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from slotwise.streams.config import Settings
from slotwise.streams.dev.kafka_broker import KAFKA_VERSION, Kafka, kafka_classpath_dir
from slotwise.streams.dev.kafka_security import apply_acls
from slotwise.streams.dev.milvus_security import grant_users
from slotwise.streams.dev.milvus_server import MILVUS_ENGINES, MilvusEngine, milvus_service
from slotwise.streams.dev.redis_server import Redis
from slotwise.streams.dev.security import Role, StackSecurity
from slotwise.streams.dev.services import (
    REPO_ROOT,
    MissingTool,
    NotLocal,
    Service,
    ServiceChange,
    ServiceFailed,
    ServiceStatus,
    StackError,
    address_of,
)

__all__ = [
    "KAFKA_VERSION",
    "MILVUS_ENGINES",
    "MilvusEngine",
    "MissingTool",
    "NotLocal",
    "ServiceChange",
    "ServiceFailed",
    "ServiceStatus",
    "Stack",
    "StackError",
    "kafka_classpath_dir",
]


class Stack:
    """The three local services of one data dir, at the addresses of ``settings``."""

    def __init__(
        self,
        settings: Settings,
        data_dir: Path | None = None,
        *,
        kafka_version: str = KAFKA_VERSION,
        milvus: MilvusEngine | None = None,
        secure: bool = False,
    ) -> None:
        """``milvus``: the engine to start if none answers; by default the one this data
        dir last started and has not stopped, else ``settings.stack_milvus``.
        ``secure``: make (or reuse) the data dir's secrets; a data dir that has them is
        secure either way."""
        self.settings = settings
        self.data_dir = (data_dir or settings.data_dir).expanduser().resolve()
        if self.data_dir.is_relative_to(REPO_ROOT):
            raise StackError(f"data dir {self.data_dir} is inside the source tree; pick another")
        self.security = self._security(secure)
        self._engine_path = self.data_dir / "milvus" / "engine"
        self.milvus_engine: MilvusEngine = (
            milvus or self._recorded_engine() or settings.stack_milvus
        )
        self._services: tuple[Service, ...] = (
            Kafka(
                address_of(settings.kafka_bootstrap.split(",")[0]),
                self.data_dir,
                kafka_version,
                self.security,
            ),
            Redis(address_of(settings.redis_url), self.data_dir, settings.redis_url, self.security),
            milvus_service(
                self.milvus_engine,
                address_of(settings.milvus_uri),
                self.data_dir,
                settings.milvus_uri,
                self.security,
            ),
        )

    def _security(self, secure: bool) -> StackSecurity | None:
        recorded = StackSecurity.recorded(self.data_dir)
        if not secure or recorded is not None:
            return recorded
        if (self.data_dir / "kafka" / "data" / "meta.properties").exists():
            # Its SCRAM users are made when the storage is formatted, which has happened.
            raise StackError(
                f"{self.data_dir} holds a broker formatted without --secure; "
                "bring the secure stack up in another --data-dir"
            )
        with self._locked():  # two first `up --secure`s must not make two CAs
            return StackSecurity.ensure(self.data_dir)

    def _recorded_engine(self) -> MilvusEngine | None:
        try:
            recorded = self._engine_path.read_text().strip()
        except OSError:
            return None
        return next((e for e in MILVUS_ENGINES if e == recorded), None)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # Concurrent `up`s (two test sessions, CI and a shell) must not start a service twice.
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with (self.data_dir / "stack.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def up(self) -> tuple[ServiceChange, ...]:
        """Start what is not answering, then wait until every service is healthy."""
        with self._locked():
            # A process of ours, or an open port, is a service (maybe still starting): wait.
            missing = [
                s for s in self._services if s.our_pid() is None and not s.address.listening()
            ]
            for service in missing:
                service.preflight()  # all or nothing: a missing program starts no service
            # Kafka last: formatting its storage takes seconds that the others boot in.
            started = {s.name: s.start() for s in reversed(missing)}
            if "milvus" in started:
                self._engine_path.write_text(f"{self.milvus_engine}\n")
            for service in self._services:
                service.wait_healthy(started.get(service.name, service.our_pid()))
            if self.security is not None:
                self._grant(self.security)
            return tuple(
                ServiceChange(s.status(), "started" if s.name in started else "reused")
                for s in self._services
            )

    def _grant(self, security: StackSecurity) -> None:
        """Kafka's ACLs, and Milvus's users when a Milvus server (not Lite) answers."""
        kafka, _, milvus = self._services
        apply_acls(security, str(kafka.address), self.settings.catalogue(), self.settings.group_id)
        if (milvus.engine() or "").startswith("server"):
            grant_users(security, self.settings.milvus_uri)

    def down(self, grace_s: float = 30.0) -> tuple[ServiceChange, ...]:
        """Stop what this data dir started: SIGTERM, then SIGKILL after ``grace_s``."""
        with self._locked():
            stopped = {s.name: s.stop(grace_s) for s in self._services}
            if stopped["milvus"]:
                self._engine_path.unlink(missing_ok=True)
            return tuple(
                ServiceChange(s.status(), "stopped" if stopped[s.name] else "not ours")
                for s in self._services
            )

    def status(self) -> tuple[ServiceStatus, ...]:
        return tuple(s.status() for s in self._services)

    def role_env(self, role: Role) -> dict[str, str]:
        """The ``SLOTWISE_*`` variables of one role against this (secure) stack."""
        if self.security is None:
            raise StackError(
                f"the stack of {self.data_dir} is not secure: bring it up with --secure"
            )
        return self.security.role_env(
            role,
            kafka_bootstrap=self.settings.kafka_bootstrap,
            redis=address_of(self.settings.redis_url),
            milvus_uri=self.settings.milvus_uri,
            milvus_auth=self.milvus_engine == "server",
        )
