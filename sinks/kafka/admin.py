"""Create the catalogue's topics on a broker, idempotently, and refuse to break co-partitioning.

TopicAdminError         a topic operation failed (independent of RecordError)
├── PartitionMismatch   subject-keyed topics would not share one partition count
└── TopicRequestFailed  the broker refused or timed out a create/delete/describe
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported, unmarked
    AdminClient,
    ConfigResource,
    ResourceType,
)
from confluent_kafka.cimpl import NewTopic

from slotwise.sinks.kafka.access import KafkaAccessDenied, check_access
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.connection import Connection, client_config
from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "EnsureResult",
    "PartitionMismatch",
    "TopicAdminError",
    "TopicRequestFailed",
    "broker_replication_factor",
    "delete_topics",
    "ensure_topics",
]

# In a CreateTopics request: "the broker's default.replication.factor".
_BROKER_DEFAULT = -1

_log = logging.getLogger(__name__)


class TopicAdminError(SlotwiseError, RuntimeError):
    pass


class PartitionMismatch(TopicAdminError):
    def __init__(self, message: str, *, partitions: dict[str, int], expected: int) -> None:
        super().__init__(message)
        self.partitions = partitions
        """Partition count of every subject-keyed topic that already exists."""
        self.expected = expected


class TopicRequestFailed(TopicAdminError):
    pass


@dataclass(frozen=True, slots=True)
class EnsureResult:
    created: tuple[str, ...]
    existing: tuple[str, ...]

    def summary(self) -> str:
        if not self.created:
            return f"all {len(self.existing)} topics already exist; nothing created"
        return f"created {len(self.created)} topics, {len(self.existing)} already existed"


def _admin(connection: Connection) -> AdminClient:
    try:
        check_access(connection)  # a refused login fails now, not after every timeout
    except KafkaAccessDenied as exc:
        raise TopicRequestFailed(str(exc)) from exc
    return AdminClient(client_config(connection), logger=_log)


def _partition_counts(admin: AdminClient, timeout_s: float) -> dict[str, int]:
    try:
        metadata = admin.list_topics(timeout=timeout_s)
    except KafkaException as exc:
        raise TopicRequestFailed(f"could not read topic metadata: {exc}") from None
    return {name: len(topic.partitions) for name, topic in metadata.topics.items()}


def _check_copartitioned(catalogue: Catalogue, existing: dict[str, int]) -> None:
    keyed = {
        s.name: existing[s.name]
        for s in catalogue.specs()
        if s.keyed_by_subject and s.name in existing
    }
    wrong = {name: n for name, n in keyed.items() if n != catalogue.partitions}
    if not wrong:
        return
    counts = ", ".join(f"{name} has {n}" for name, n in sorted(keyed.items()))
    raise PartitionMismatch(
        f"subject-keyed topics must all have {catalogue.partitions} partitions so one worker "
        f"owns a subject on every topic, but {counts}; use --partitions to match the existing "
        f"topics, or delete and recreate them",
        partitions=keyed,
        expected=catalogue.partitions,
    )


def ensure_topics(
    connection: Connection,
    catalogue: Catalogue,
    replication_factor: int | None = None,
    *,
    timeout_s: float = 30.0,
) -> EnsureResult:
    """Create the catalogue's missing topics with its cleanup policy and retention, each
    partition on ``replication_factor`` brokers (None: the brokers' default, so 1 on the
    single local broker and 3 on a cluster).

    Refuses, creating nothing, when an existing subject-keyed topic's partition
    count differs from the catalogue's (and so from its co-partitioned peers).
    """
    admin = _admin(connection)
    existing = _partition_counts(admin, timeout_s)
    _check_copartitioned(catalogue, existing)
    missing = [s for s in catalogue.specs() if s.name not in existing]
    requests = [
        NewTopic(s.name, num_partitions=s.partitions,
                 replication_factor=replication_factor or _BROKER_DEFAULT, config=s.config())
        for s in missing
    ]  # fmt: skip
    created: list[str] = []
    raced: list[str] = []
    if requests:
        futures = admin.create_topics(
            requests, operation_timeout=timeout_s, request_timeout=timeout_s
        )
        for name, future in futures.items():
            try:
                future.result()
                created.append(name)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise TopicRequestFailed(f"creating {name} failed: {exc}") from None
                raced.append(name)  # another process created it meanwhile
        _wait_visible(admin, [*created, *raced], timeout_s)
        if raced:
            _check_copartitioned(catalogue, _partition_counts(admin, timeout_s))
    names = [s.name for s in catalogue.specs()]
    return EnsureResult(
        created=tuple(n for n in names if n in created),
        existing=tuple(n for n in names if n not in created),
    )


def _wait_visible(admin: AdminClient, names: Iterable[str], timeout_s: float) -> None:
    # Creation is acknowledged by the controller; producers need the broker's metadata.
    wanted = set(names)
    deadline = time.monotonic() + timeout_s
    while wanted and time.monotonic() < deadline:
        topics = admin.list_topics(timeout=timeout_s).topics
        if all(n in topics and topics[n].error is None for n in wanted):
            return
        time.sleep(0.1)
    if wanted:
        raise TopicRequestFailed(f"topics not visible after {timeout_s:.0f} s: {sorted(wanted)}")


def delete_topics(connection: Connection, names: Iterable[str], *, timeout_s: float = 30.0) -> None:
    """Delete ``names``; topics that do not exist are ignored."""
    admin = _admin(connection)
    wanted = list(names)
    if not wanted:
        return
    futures = admin.delete_topics(wanted, operation_timeout=timeout_s, request_timeout=timeout_s)
    for name, future in futures.items():
        try:
            future.result()
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise TopicRequestFailed(f"deleting {name} failed: {exc}") from None


def broker_replication_factor(connection: Connection, *, timeout_s: float = 30.0) -> int:
    """A broker's ``default.replication.factor``, for a client that must name a replication
    factor when it creates topics (Faust's CreateTopics request predates "the default")."""
    admin = _admin(connection)
    try:
        broker = min(admin.list_topics(timeout=timeout_s).brokers)
        resource = ConfigResource(ResourceType.BROKER, str(broker))
        configs = admin.describe_configs([resource], request_timeout=timeout_s)[resource].result()
    except (KafkaException, ValueError) as exc:  # ValueError: no broker in the metadata
        raise TopicRequestFailed(f"could not read the brokers' replication factor: {exc}") from None
    return int(configs["default.replication.factor"].value)
