"""The local stack: Kafka (one broker, or a cluster of three), Redis and a Milvus (Lite, or a
server) on loopback.

``up`` starts what is missing and reuses whatever already answers on a
service's port, so it is safe to run from a shell, from CI and from every test
session at once. What it starts runs detached (``services.py``); ``down``
stops only those. The Milvus engine and the number of brokers it started are
recorded in the data dir, so ``down`` and ``status`` without a flag act on
whichever runs. Likewise a data
dir brought up ``secure`` (``security.py``: TLS, SCRAM and Redis ACL users,
Kafka ACLs from ``kafka_security.py``) stays secure: its secrets are its record.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from slotwise.streams.config import Settings
from slotwise.streams.dev.kafka_broker import KAFKA_VERSION, Kafka, kafka_classpath_dir
from slotwise.streams.dev.kafka_cluster import (
    bootstrap_servers,
    kafka_services,
    record_brokers,
    recorded_brokers,
)
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
    """The local services of one data dir, at the addresses of ``settings``."""

    def __init__(
        self,
        settings: Settings,
        data_dir: Path | None = None,
        *,
        kafka_version: str = KAFKA_VERSION,
        milvus: MilvusEngine | None = None,
        secure: bool = False,
        brokers: int | None = None,
    ) -> None:
        """``milvus``: the engine to start if none answers; by default the one this data
        dir last started and has not stopped, else ``settings.stack_milvus``.
        ``secure``: make (or reuse) the data dir's secrets; a data dir that has them is
        secure either way. ``brokers``: 1, or 3 for a KRaft cluster from the first
        bootstrap address on; by default as many as this data dir last started and has
        not stopped, else 1."""
        self.settings = settings
        self.data_dir = (data_dir or settings.data_dir).expanduser().resolve()
        if self.data_dir.is_relative_to(REPO_ROOT):
            raise StackError(f"data dir {self.data_dir} is inside the source tree; pick another")
        self.security = self._security(secure)
        self._engine_path = self.data_dir / "milvus" / "engine"
        self.milvus_engine: MilvusEngine = (
            milvus or self._recorded_engine() or settings.stack_milvus
        )
        self.brokers = brokers or recorded_brokers(self.data_dir) or 1
        first_broker = address_of(settings.kafka_bootstrap.split(",")[0])
        self.kafka_bootstrap = bootstrap_servers(first_broker, self.brokers)
        """Every broker's address: what ``SLOTWISE_KAFKA_BOOTSTRAP`` should list."""
        self._kafka = kafka_services(
            first_broker, self.data_dir, kafka_version, self.brokers, self.security
        )
        self._services: tuple[Service, ...] = (
            *self._kafka,
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
        if any(self.data_dir.glob("kafka*/data/meta.properties")):
            # Its SCRAM users are made when the storage is formatted, which has happened.
            raise StackError(
                f"{self.data_dir} holds a broker formatted without --secure; "
                "bring the secure stack up in another --data-dir"
            )
        with self._locked():  # two first `up --secure`s must not make two CAs
            return StackSecurity.ensure(self.data_dir)

    @property
    def kafka(self) -> tuple[Kafka, ...]:
        """The broker, or a cluster's nodes in node id order."""
        return self._kafka

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
            self._refuse_partial_cluster(missing)
            for service in missing:
                service.preflight()  # all or nothing: a missing program starts no service
            # Kafka last: formatting its storage takes seconds that the others boot in.
            started = {s.name: s.start() for s in reversed(missing)}
            if "milvus" in started:
                self._engine_path.write_text(f"{self.milvus_engine}\n")
            if any(k.name in started for k in self._kafka):
                record_brokers(self.data_dir, self.brokers)
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
        milvus = self._services[-1]
        apply_acls(
            security, self.kafka_bootstrap, self.settings.catalogue(), self.settings.group_id
        )
        if (milvus.engine() or "").startswith("server"):
            grant_users(security, self.settings.milvus_uri)

    def down(self, grace_s: float = 30.0) -> tuple[ServiceChange, ...]:
        """Stop what this data dir started: SIGTERM, then SIGKILL after ``grace_s``."""
        with self._locked():
            # All at once: a cluster's nodes stopped one by one leave the last without a
            # quorum to hand its partitions over to, and it waits out the whole grace.
            with ThreadPoolExecutor(len(self._services)) as pool:
                stops = pool.map(lambda s: s.stop(grace_s), self._services)
                stopped = {s.name: done for s, done in zip(self._services, stops, strict=True)}
            if stopped["milvus"]:
                self._engine_path.unlink(missing_ok=True)
            if any(stopped[k.name] for k in self._kafka):
                record_brokers(self.data_dir, None)
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
            kafka_bootstrap=self.kafka_bootstrap,
            redis=address_of(self.settings.redis_url),
            milvus_uri=self.settings.milvus_uri,
            milvus_auth=self.milvus_engine == "server",
        )

    def _refuse_partial_cluster(self, missing: list[Service]) -> None:
        """A node cannot join a quorum it was not formatted for: when some of a cluster's
        ports answer with brokers this data dir did not start (a single broker, another
        cluster) and others are free, starting the rest would never become healthy."""
        if len(self._kafka) == 1:
            return
        foreign = [k for k in self._kafka if k not in missing and k.our_pid() is None]
        if foreign and any(k in missing for k in self._kafka):
            taken = ", ".join(str(k.address) for k in foreign)
            raise StackError(
                f"a Kafka this data dir did not start as a {self.brokers}-broker cluster "
                f"answers at {taken}: stop it (`slotwise stack down` in its data dir) or move "
                f"the cluster with SLOTWISE_KAFKA_BOOTSTRAP"
            )
