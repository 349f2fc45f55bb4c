"""The producer and the baseline loop against the real broker and Redis."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import redis
from confluent_kafka import Consumer, Message

from slotwise.loadtest.baseline import preload, run_baseline
from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.loadtest.producer import publish
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import decode_record
from slotwise.topics.records import Observation

SCHEMA = AttributeSchema.load()


def _drain(consumer: Consumer, topic: str, expected: int, timeout_s: float = 60.0) -> list[Message]:
    consumer.subscribe([topic])
    messages: list[Message] = []
    deadline = time.monotonic() + timeout_s
    while len(messages) < expected and time.monotonic() < deadline:
        messages += [m for m in consumer.consume(500, 0.5) if m.error() is None]
    return messages


@pytest.mark.kafka
def test_publishes_every_record_keyed_by_subject_in_subject_order(
    kafka_bootstrap: str, catalogue: Catalogue, consumer_factory: Callable[..., Consumer]
) -> None:
    config = WorkloadConfig(subjects=20, count=300, seed=3, subject_prefix=catalogue.prefix)
    sent = [w.observation() for w in generate(config, SCHEMA)]
    report = publish(sent, kafka_bootstrap, catalogue.observations, rate=None, progress=False)
    assert (report.sent, report.delivered, report.failed) == (300, 300, 0)
    assert set(report.produced_at) == {o.observation_id for o in sent}

    messages = _drain(consumer_factory(), catalogue.observations, 300)
    assert len(messages) == 300
    received: dict[str, list[str]] = {}
    for message in messages:
        record = decode_record(message.value(), key=message.key())
        assert isinstance(record, Observation)
        assert dict(message.headers() or [])["content-type"] == b"application/json"
        received.setdefault(record.subject_id, []).append(record.observation_id)
    expected: dict[str, list[str]] = {}
    for observation in sent:
        expected.setdefault(observation.subject_id, []).append(observation.observation_id)
    assert received == expected


@pytest.mark.kafka
@pytest.mark.parametrize(("rate", "count"), [(5.0, 11), (50.0, 51)])
def test_holds_the_target_rate(
    kafka_bootstrap: str, catalogue: Catalogue, rate: float, count: int
) -> None:
    config = WorkloadConfig(subjects=5, count=count, subject_prefix=catalogue.prefix)
    records = (w.candidate() for w in generate(config, SCHEMA))
    report = publish(records, kafka_bootstrap, catalogue.candidates, rate=rate, progress=False)
    assert report.delivered == count
    stamps = sorted(report.produced_at.values())
    # count records span count - 1 intervals of 1/rate
    assert stamps[-1] - stamps[0] == pytest.approx((count - 1) / rate, rel=0.05)


@pytest.mark.kafka
@pytest.mark.redis
def test_baseline_loops_apply_every_record_and_clean_up(
    kafka_bootstrap: str,
    redis_url: str,
    catalogue: Catalogue,
    consumer_factory: Callable[..., Consumer],
) -> None:
    assert preload(kafka_bootstrap, catalogue, 2_000, subjects=50) == 2_000
    for mode in ("plain", "transactional"):
        run = run_baseline(kafka_bootstrap, redis_url, catalogue, expected=2_000, mode=mode)
        assert run.records == 2_000 and run.rate > 0
    committed = consumer_factory(config={"isolation.level": "read_committed"})
    assert len(_drain(committed, catalogue.facts, 4_000)) == 4_000
    store = redis.Redis.from_url(redis_url)
    assert list(store.scan_iter(match=f"{catalogue.prefix}:baseline:*")) == []
