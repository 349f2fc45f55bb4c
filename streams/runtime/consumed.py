"""A consumed Kafka record as a typed value (confluent's Message is all optionals)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from confluent_kafka import TIMESTAMP_NOT_AVAILABLE

from slotwise.streams.runtime.ports import Fetched

__all__ = ["Consumed"]


@dataclass(frozen=True, slots=True)
class Consumed:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp: datetime | None

    @classmethod
    def of(cls, message: Fetched) -> Consumed:
        topic, partition, offset = message.topic(), message.partition(), message.offset()
        if topic is None or partition is None or offset is None:
            raise ValueError("a consumed record without topic, partition or offset")
        kind, millis = message.timestamp()
        raw_headers = message.headers() or []
        pairs = raw_headers.items() if isinstance(raw_headers, dict) else raw_headers
        key, value = message.key(), message.value()
        return cls(
            topic=topic,
            partition=partition,
            offset=offset,
            key=key.encode() if isinstance(key, str) else key,
            value=value.encode() if isinstance(value, str) else value,
            headers=tuple((k, v.encode() if isinstance(v, str) else (v or b"")) for k, v in pairs),
            timestamp=(
                None
                if kind == TIMESTAMP_NOT_AVAILABLE or millis < 0
                else datetime.fromtimestamp(millis / 1000, tz=UTC)
            ),
        )

    @property
    def tp(self) -> tuple[str, int]:
        return (self.topic, self.partition)
