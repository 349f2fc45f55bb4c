"""What ``slotwise calibrate`` reads: the stream job's table, and the store's still-true facts.

The closed lifetimes are aggregated online by the faust app
(``streams/passes/calibration_app.py``) into a table whose durable state is its
compacted changelog topic; reading that topic to its end gives the table as
the app last wrote it, whether the app runs or not. The censored part (ages of
facts still true) is a property of *now*, so it is read from the store when
the fit is made. ``--from-store`` reads the closed lifetimes from the store's
superseded facts too: the same estimate, from a scan instead of the stream,
which cross-checks the app.

Errors: :class:`CalibrationUnavailable` (Kafka or Redis could not be read).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

import orjson
import redis
from confluent_kafka import Consumer, KafkaException, TopicPartition

from slotwise.processors.calibration import HalfLifeFit, Lifetimes, fit, lifetimes_of
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.redis.keys import FACTS, KeyLayout
from slotwise.streams.config import Settings
from slotwise.topics.codec import decode_record
from slotwise.topics.exceptions import RecordError, SlotwiseError
from slotwise.topics.records import Fact

__all__ = [
    "TABLE",
    "CalibrationUnavailable",
    "app_id",
    "changelog_lifetimes",
    "changelog_topic",
    "fits_of",
    "store_facts",
    "store_lifetimes",
]

TABLE = "halflife-lifetimes"


class CalibrationUnavailable(SlotwiseError, ConnectionError):
    """The table's changelog or the store could not be read."""


def app_id(settings: Settings) -> str:
    """The faust app's id: its consumer group and the prefix of its internal topics."""
    return f"{settings.topic_prefix}-calibrate"


def changelog_topic(settings: Settings) -> str:
    return f"{app_id(settings)}-{TABLE}-changelog"


def entry_key(category: str, partition: int) -> str:
    """A table key: one entry per category and source partition (each has one writer)."""
    return f"{category}/{partition}"


def category_of(key: str) -> str:
    return key.rpartition("/")[0]


def changelog_lifetimes(settings: Settings, *, timeout_s: float = 30.0) -> dict[str, Lifetimes]:
    """The closed lifetimes per category, as the table's changelog holds them now."""
    latest: dict[str, Mapping[str, Any]] = {}
    for key, value in _to_end(settings, changelog_topic(settings), timeout_s):
        name = _key_name(key)
        if name is None:
            continue
        if value is None:
            latest.pop(name, None)
        else:
            body = orjson.loads(value)
            if isinstance(body, dict):
                latest[name] = body
    found: dict[str, Lifetimes] = {}
    for name, body in latest.items():
        part = Lifetimes(closed=int(body.get("closed", 0)), closed_days=float(body.get("days", 0)))
        category = category_of(name)
        found[category] = found.get(category, Lifetimes()) + part
    return found


def _key_name(key: bytes | None) -> str | None:
    """A table key as faust wrote it: raw UTF-8 (``key_type=str``), or JSON if configured so."""
    if not key:
        return None
    text = key.decode("utf-8", "replace")
    if text.startswith('"'):
        decoded = orjson.loads(text)
        return decoded if isinstance(decoded, str) else None
    return text


def _to_end(
    settings: Settings, topic: str, timeout_s: float
) -> Iterator[tuple[bytes | None, bytes | None]]:
    consumer = Consumer(
        settings.librdkafka(
            {
                "group.id": f"slotwise-calibrate-read-{uuid.uuid4()}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
            }
        )
    )
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is None or metadata.error is not None:
            return  # the app has not run yet: no lifetimes recorded
        ends: dict[int, int] = {}
        for partition in metadata.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            if high > low:
                ends[partition] = high
        if not ends:
            return
        consumer.assign([TopicPartition(topic, p, 0) for p in ends])
        deadline = time.monotonic() + timeout_s
        while ends:
            if time.monotonic() > deadline:
                raise CalibrationUnavailable(f"{topic}: not read to its end in {timeout_s:g} s")
            message = consumer.poll(0.5)
            if message is None or message.error() is not None:
                continue
            yield message.key(), message.value()
            partition, offset = message.partition(), message.offset()
            if (
                partition is not None
                and offset is not None
                and offset + 1 >= ends.get(partition, 0)
            ):
                ends.pop(partition, None)
    except KafkaException as exc:
        raise CalibrationUnavailable(f"reading {topic}: {exc.args[0]}") from exc
    finally:
        consumer.close()


def store_facts(settings: Settings, *, batch: int = 500) -> Iterator[Fact]:
    """Every stored fact of every subject (a scan: for calibration, not for the hot path)."""
    client = redis.Redis.from_url(settings.redis_url)
    pattern = KeyLayout(settings.redis_prefix).kind_pattern(FACTS)
    try:
        for key in client.scan_iter(match=pattern, count=batch):
            for _, body in client.hscan_iter(key, count=batch):
                try:
                    record = decode_record(body, expect=(Fact,))
                except RecordError:
                    continue
                if isinstance(record, Fact):
                    yield record
    except redis.RedisError as exc:
        raise CalibrationUnavailable(f"scanning redis: {exc}") from exc
    finally:
        client.close()


def store_lifetimes(
    settings: Settings, schema: AttributeSchema, *, as_of: datetime, closed: bool
) -> dict[str, Lifetimes]:
    """Per category, the censored ages of still-true facts (and closed lifetimes if asked)."""
    return lifetimes_of(store_facts(settings), schema, as_of=as_of, closed=closed)


def fits_of(
    closed: Mapping[str, Lifetimes],
    censored: Mapping[str, Lifetimes],
    current: Mapping[str, float | None],
    *,
    confidence: float,
) -> list[HalfLifeFit]:
    """One fit per category seen in either part (or in the vocabulary), by name."""
    categories = sorted(set(closed) | set(censored) | {c for c, d in current.items() if d})
    return [
        fit(
            category,
            closed.get(category, Lifetimes()) + censored.get(category, Lifetimes()),
            confidence=confidence,
            current_days=current.get(category),
        )
        for category in categories
    ]
