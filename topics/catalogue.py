"""The topic catalogue: names under one prefix, one partition count."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Catalogue", "TopicSpec"]

_DAY_MS = 24 * 3600 * 1000


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    partitions: int
    cleanup_policy: str
    retention_ms: int | None
    keyed_by_subject: bool
    # Bounds how long a value behind a tombstone stays readable on a compacted topic
    # (Kafka's default is no bound): an erasure's attestation states it.
    max_compaction_lag_ms: int | None = None

    def config(self) -> dict[str, str]:
        config = {"cleanup.policy": self.cleanup_policy}
        if self.retention_ms is not None:
            config["retention.ms"] = str(self.retention_ms)
        if self.max_compaction_lag_ms is not None:
            config["max.compaction.lag.ms"] = str(self.max_compaction_lag_ms)
        return config


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Every topic slotwise reads or writes, named ``<prefix>.<kind>.v1``.

    All subject-keyed topics share one partition count, so one worker owns a
    subject on every topic at once.
    """

    prefix: str = "slotwise"
    partitions: int = 12

    def _name(self, kind: str) -> str:
        return f"{self.prefix}.{kind}.v1"

    @property
    def observations(self) -> str:
        return self._name("observations")

    @property
    def candidates(self) -> str:
        return self._name("candidates")

    @property
    def supersessions(self) -> str:
        return self._name("supersessions")

    @property
    def facts(self) -> str:
        return self._name("facts")

    @property
    def review(self) -> str:
        return self._name("review")

    @property
    def erasures(self) -> str:
        return self._name("erasures")

    @property
    def deadletter(self) -> str:
        return self._name("deadletter")

    def specs(self) -> tuple[TopicSpec, ...]:
        n = self.partitions
        return (
            TopicSpec(self.observations, n, "delete", 7 * _DAY_MS, True),
            TopicSpec(self.candidates, n, "delete", 7 * _DAY_MS, True),
            TopicSpec(self.supersessions, n, "delete", 30 * _DAY_MS, True),
            TopicSpec(self.facts, n, "compact", None, False, max_compaction_lag_ms=_DAY_MS),
            TopicSpec(self.review, n, "delete", None, True),
            TopicSpec(self.erasures, n, "delete", 365 * _DAY_MS, True),
            TopicSpec(self.deadletter, n, "delete", 30 * _DAY_MS, False),
        )
