"""How long topics keep what was written to them, as the broker says, and what that bounds.

An erasure cannot edit an append-only topic; its attestation says instead
when retention removes what a topic holds. The values are read from the
broker (``describe_configs``), never assumed: a cluster's topics need not have
the catalogue's defaults.

The bounds, for a record written before a moment *t*:

* **delete** topics: a record goes with its segment, which is deleted once the
  segment's newest record is older than ``retention.ms``. The segment holding
  the record is closed ``segment.ms`` after it opened at the latest (a roll is
  evaluated when a record is appended), and the broker looks every
  ``log.retention.check.interval.ms``: gone by *t* + ``segment.ms`` +
  ``retention.ms`` + the interval. ``retention.ms = -1`` keeps it forever.
* **compact** topics: a value behind a tombstone goes when the log cleaner
  compacts its segment. With ``max.compaction.lag.ms`` set, the segment is
  rolled and cleaned within ``min(segment.ms, max.compaction.lag.ms)`` of the
  tombstone (plus ``log.cleaner.backoff.ms``); with Kafka's default (no lag
  bound) nothing bounds it, and the attestation says so.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from confluent_kafka import KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported, unmarked
    AdminClient,
    ConfigResource,
    ResourceType,
)

from slotwise.topics.connection import Connection, client_config
from slotwise.topics.exceptions import SlotwiseError

__all__ = ["Retention", "RetentionReader", "RetentionUnavailable", "TopicRetention"]

_UNBOUNDED = 2**63 - 1  # Long.MAX_VALUE: Kafka's "no maximum compaction lag"
_DEFAULT_CHECK_MS = 300_000
_DEFAULT_BACKOFF_MS = 15_000
_WEEK_MS = 7 * 24 * 3600 * 1000


class RetentionUnavailable(SlotwiseError, ConnectionError):
    """The broker did not say how long its topics keep records (a transient outage)."""


@dataclass(frozen=True, slots=True)
class TopicRetention:
    topic: str
    cleanup_policy: str
    retention_ms: int | None  # None: -1, kept forever
    segment_ms: int
    max_compaction_lag_ms: int | None  # None: no bound (Kafka's default)

    @property
    def deletes(self) -> bool:
        return "delete" in self.cleanup_policy

    def expires_by(
        self, after: datetime, *, check_interval_ms: int, cleaner_backoff_ms: int
    ) -> datetime | None:
        """When a record written before ``after`` is gone at the latest; None if never."""
        if self.deletes:
            if self.retention_ms is None:
                return None
            delay = self.segment_ms + self.retention_ms + check_interval_ms
        elif self.max_compaction_lag_ms is None:
            return None
        else:
            delay = min(self.segment_ms, self.max_compaction_lag_ms) + cleaner_backoff_ms
        return after + timedelta(milliseconds=delay)


@dataclass(frozen=True, slots=True)
class Retention:
    topics: dict[str, TopicRetention]
    check_interval_ms: int = _DEFAULT_CHECK_MS
    cleaner_backoff_ms: int = _DEFAULT_BACKOFF_MS

    def expires_by(self, topic: str, after: datetime) -> datetime | None:
        return self.topics[topic].expires_by(
            after,
            check_interval_ms=self.check_interval_ms,
            cleaner_backoff_ms=self.cleaner_backoff_ms,
        )


def _int(entries: dict[str, object], name: str, default: int) -> int:
    entry = entries.get(name)
    value = getattr(entry, "value", None)
    return int(value) if value not in (None, "") else default


class RetentionReader:
    """Reads topics' retention from the broker, at most once per ``ttl_s``; blocking."""

    def __init__(
        self,
        connection: Connection,
        topics: Iterable[str],
        *,
        ttl_s: float = 60.0,
        timeout_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._connection = connection
        self._topics = tuple(topics)
        self._ttl_s = ttl_s
        self._timeout_s = timeout_s
        self._clock = clock
        self._cached: tuple[float, Retention] | None = None
        self._lock = threading.Lock()

    def read(self) -> Retention:
        with self._lock:
            if self._cached is not None and self._clock() - self._cached[0] < self._ttl_s:
                return self._cached[1]
            retention = self._describe()
            self._cached = (self._clock(), retention)
            return retention

    def _describe(self) -> Retention:
        admin = AdminClient(client_config(self._connection))
        try:
            brokers = list(admin.list_topics(timeout=self._timeout_s).brokers)
            resources = [ConfigResource(ResourceType.TOPIC, t) for t in self._topics]
            if brokers:
                resources.append(ConfigResource(ResourceType.BROKER, str(brokers[0])))
            futures = admin.describe_configs(resources, request_timeout=self._timeout_s)
            described = {(r.restype, r.name): f.result(self._timeout_s) for r, f in futures.items()}
        except KafkaException as exc:
            raise RetentionUnavailable(f"reading topic retention failed: {exc}") from exc
        topics = {}
        for topic in self._topics:
            entries = described[(ResourceType.TOPIC, topic)]
            retention = _int(entries, "retention.ms", _WEEK_MS)
            lag = _int(entries, "max.compaction.lag.ms", _UNBOUNDED)
            topics[topic] = TopicRetention(
                topic=topic,
                cleanup_policy=str(getattr(entries.get("cleanup.policy"), "value", "delete")),
                retention_ms=None if retention < 0 else retention,
                segment_ms=_int(entries, "segment.ms", _WEEK_MS),
                max_compaction_lag_ms=None if lag >= _UNBOUNDED else lag,
            )
        broker = described.get((ResourceType.BROKER, str(brokers[0])), {}) if brokers else {}
        return Retention(
            topics,
            check_interval_ms=_int(broker, "log.retention.check.interval.ms", _DEFAULT_CHECK_MS),
            cleaner_backoff_ms=_int(broker, "log.cleaner.backoff.ms", _DEFAULT_BACKOFF_MS),
        )
