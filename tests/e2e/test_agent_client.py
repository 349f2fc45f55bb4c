"""The agent-side client end to end: a real worker, Kafka, Redis and Milvus Lite."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from slotwise.client import (
    AsyncClient,
    Client,
    InvalidRequest,
    Observation,
    SearchHit,
    Subscription,
    SupersessionEvent,
    WaitTimeout,
)
from tests.e2e.harness import Pipeline

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SEARCHABLE_S = 20.0


def _turn(subject: str, text: str, at: str) -> Observation:
    return Observation(
        observation_id=str(uuid.uuid4()),
        subject_id=subject,
        text=text,
        observed_at=datetime.fromisoformat(at).replace(tzinfo=UTC),
    )


def _values(facts: list[object]) -> list[object]:
    return [(f.attribute, f.value) for f in facts]  # type: ignore[attr-defined]


def test_publish_wait_read_as_of_believed_at_search_subscribe(pipeline: Pipeline) -> None:
    pipeline.worker().wait_healthy()
    run = uuid.uuid4().hex[:6]
    ana, bob, sly = f"ana-{run}", f"bob-{run}", f'x" or subject_id != "{run}'
    group = f"agent-{run}"
    with Client(pipeline.deployment) as memory:
        events = memory.subscribe("supersessions", group=group, from_beginning=True)
        before_any_write = datetime.now(UTC) - timedelta(seconds=1)
        datadog = _turn(ana, "I'm a backend engineer at Datadog.", "2026-03-02T10:00:00")
        memory.publish(datadog)
        memory.wait(ana, datadog.observation_id, timeout=60)
        assert ("employer", "Datadog") in _values(memory.facts(ana))

        between = datetime.now(UTC)
        time.sleep(1.1)  # recorded_at is the candidate's Kafka timestamp (ms)
        stripe = _turn(ana, "I start at Stripe on Monday.", "2026-03-14T10:00:00")
        traceparent = f"00-{TRACE}-00f067aa0ba902b7-01"
        placed = memory.publish(stripe, traceparent=traceparent)
        assert placed.topic == pipeline.catalogue.observations
        memory.wait(ana, stripe.observation_id, timeout=60)

        now = _values(memory.facts(ana))
        assert ("employer", "Stripe") in now and ("employer", "Datadog") not in now
        # Valid time: on 10 March the user still worked at Datadog.
        then = memory.facts(ana, as_of=datetime(2026, 3, 10, tzinfo=UTC))
        assert ("employer", "Datadog") in _values(then)
        assert ("employer", "Stripe") not in _values(then)
        # Transaction time: before the first write slotwise knew nothing.
        assert memory.facts(ana, believed_at=before_any_write) == []
        # ...and between the two writes it believed Datadog, current then.
        believed = memory.facts(ana, believed_at=between)
        assert [(f.value, f.status) for f in believed if f.attribute == "employer"] == [
            ("Datadog", "current")
        ]
        chain = [f for f in memory.facts(ana, history=True) if f.attribute == "employer"]
        assert {f.status for f in chain} == {"current", "superseded"}

        # Other subjects, one whose id reads like a filter injection.
        for subject, text in ((bob, "I'm a designer at Stripe."), (sly, "I work at Acme.")):
            turn = _turn(subject, text, "2026-03-03T10:00:00")
            memory.publish(turn)
            memory.wait(subject, turn.observation_id, timeout=60)
        for subject in (ana, bob, sly):
            hits = _searched(memory, subject)
            assert hits, subject
            assert {h.fact.subject_id for h in hits} == {subject}
            own = {f.fact_id for f in memory.facts(subject, history=True)}
            assert {h.fact.fact_id for h in hits} <= own
        assert memory.search(f"nobody-{run}", "where does the user work?") == []

        with pytest.raises(WaitTimeout):
            memory.wait(ana, "never-published", timeout=0.5)
        with pytest.raises(InvalidRequest):
            memory.facts("bad\x00id")

        # The supersession arrives typed on the subscriber's group.
        seen = _supersessions(events, ana)
        assert [(e.old_value, e.new_value) for e in seen] == [("Datadog", "Stripe")]

    # The observation's trace reached its candidates and the supersession it caused.
    for topic in (pipeline.catalogue.candidates, pipeline.catalogue.supersessions):
        assert traceparent.encode() in _traces(pipeline, topic, ana), topic


def _searched(memory: Client, subject: str) -> list[SearchHit]:
    """Search sees a write once the worker's commit has flushed its vectors, a little after
    ``wait`` (which sees the Redis state): retried for a bounded while."""
    deadline = time.monotonic() + SEARCHABLE_S
    while not (hits := memory.search(subject, "where does the user work?", k=10)):
        assert time.monotonic() < deadline, f"{subject}: never searchable"
        time.sleep(0.2)
    return hits


def _supersessions(events: Subscription, subject: str) -> list[SupersessionEvent]:
    deadline = time.monotonic() + 60
    seen: list[SupersessionEvent] = []
    try:
        while time.monotonic() < deadline and not seen:
            record = events.poll(1.0)
            if isinstance(record, SupersessionEvent) and record.subject_id == subject:
                seen.append(record)
        events.commit()
    finally:
        events.close()
    return seen


def _traces(pipeline: Pipeline, topic: str, subject: str) -> list[bytes | None]:
    return [
        dict(headers).get("traceparent")
        for key, _, headers in pipeline.read_committed(topic)
        if key == subject.encode()
    ]


def test_the_async_client_reads_the_same(pipeline: Pipeline) -> None:
    pipeline.worker().wait_healthy()
    subject = f"ana-{uuid.uuid4().hex[:6]}"

    async def run() -> list[object]:
        async with AsyncClient(pipeline.deployment) as memory:
            turn = _turn(subject, "I'm a backend engineer at Datadog.", "2026-03-02T10:00:00")
            await memory.publish(turn)
            await memory.wait(subject, turn.observation_id, timeout=60)
            deadline = time.monotonic() + SEARCHABLE_S
            while not (hits := await memory.search(subject, "job", k=3)):
                assert time.monotonic() < deadline, "the fact never became searchable"
                await asyncio.sleep(0.2)
            assert {h.fact.subject_id for h in hits} == {subject}
            return _values(await memory.facts(subject))

    assert ("employer", "Datadog") in asyncio.run(run())
