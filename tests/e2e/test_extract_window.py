"""A session's turns extracted together, end to end: worker processes against the fake model.

The turns are published before the worker starts, so its first fetches hold each
subject's session whole and the window batches them. The fake model reads each
turn of a batched call as it reads a turn alone (``loadtest/responders.py``), so a
batched run and a run with a call per turn must end with the same facts, and so must a
batched run killed while its calls are in flight and restarted.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from slotwise.loadtest.fake_anthropic import FakeAnthropic
from slotwise.loadtest.responders import bench, warm
from slotwise.topics.codec import decode_record
from slotwise.topics.records import CandidateFact, Command, Fact, Observation
from tests.e2e.conftest import PipelineFactory
from tests.e2e.harness import Pipeline, store_call

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

T0 = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)
SAID = (
    "Hi! How are you doing today?",
    "I work at Datadog as a backend engineer.",
    "I live in Lisbon.",
    "Thanks, that helps a lot.",
    "I speak Portuguese and Spanish.",
    "I'm vegetarian, by the way.",
    "Oops, I now work at Stripe, I started last month.",
)


@pytest.fixture
def model() -> Iterator[FakeAnthropic]:
    warm()
    # Calls that take a while, so that a kill lands while some are in flight.
    with FakeAnthropic(responder=bench, latency_s=0.4) as fake:
        yield fake


def _turns(subjects: list[str]) -> list[Observation]:
    """Each subject's session, the subjects' turns interleaved as concurrent chats are."""
    return [
        Observation(
            observation_id=f"{subject}-t{n}",
            subject_id=subject,
            session_id=f"{subject}-session",
            text=text,
            observed_at=T0 + timedelta(minutes=n),
        )
        for n, text in enumerate(SAID)
        for subject in subjects
    ]


def _use(pipeline: Pipeline, model: FakeAnthropic, window_ms: int) -> None:
    pipeline.extra_env.update(
        {
            "SLOTWISE_ANTHROPIC_API_KEY": "test-key",
            "SLOTWISE_ANTHROPIC_BASE_URL": model.base_url,
            "SLOTWISE_LLM_TIMEOUT_S": "10",
            "SLOTWISE_EXTRACT_GATE": "false",
            "SLOTWISE_EXTRACT_WINDOW_MS": str(window_ms),
        }
    )


def _wait_applied(pipeline: Pipeline, turns: list[Observation]) -> None:
    for subject in {t.subject_id for t in turns}:
        last = [t for t in turns if t.subject_id == subject][-1]
        assert store_call(pipeline, "wait_for_observation", subject, last.observation_id, 180.0)


def _facts(pipeline: Pipeline, subject: str) -> list[dict[str, object]]:
    facts = store_call(pipeline, "facts", subject, include_history=True)
    assert isinstance(facts, list) and facts
    return sorted(
        (f.model_dump(exclude={"recorded_at"}) for f in facts if isinstance(f, Fact)),
        key=lambda f: str(f["fact_id"]),
    )


def _extractions(model: FakeAnthropic) -> list[str]:
    return [r.user_text for r in model.requests if r.forced_tool == "record_facts"]


def test_a_batched_run_killed_mid_call_ends_as_a_call_per_turn_does(
    pipeline_factory: PipelineFactory, model: FakeAnthropic
) -> None:
    subjects = [f"win-{uuid.uuid4().hex[:6]}" for _ in range(3)]
    turns = _turns(subjects)
    base_timestamp_ms = int(time.time() * 1000)

    clean = pipeline_factory()
    _use(clean, model, 0)
    clean.publish(clean.catalogue.observations, turns, base_timestamp_ms=base_timestamp_ms)
    clean.worker().wait_healthy()
    _wait_applied(clean, turns)
    one_each = len(_extractions(model))
    assert one_each == len(turns)

    batched = pipeline_factory()
    _use(batched, model, 600_000)
    batched.publish(batched.catalogue.observations, turns, base_timestamp_ms=base_timestamp_ms)
    victim = batched.worker("victim")
    victim.wait_healthy()
    deadline = time.monotonic() + 60
    while len(_extractions(model)) == one_each and time.monotonic() < deadline:
        time.sleep(0.02)
    victim.kill()  # the first batched calls are in flight, nothing of them committed
    in_flight = len(_extractions(model))
    batched.worker("victim")
    _wait_applied(batched, turns)

    asked = _extractions(model)[one_each:]
    whole = [q for q in asked if q.startswith(f"{len(SAID)} consecutive turns ")]
    assert whole, f"no call read a subject's whole session: {asked[:3]}"
    assert len(asked) < len(turns)
    # Nothing asked before the kill was committed: the replay asked about every turn again.
    again = _extractions(model)[in_flight:]
    assert all(sum(said in q for q in again) >= len(subjects) for said in SAID)
    for subject in subjects:
        # The same facts, decided alike (recorded_at is the worker's clock: each run's own).
        assert _facts(batched, subject) == _facts(clean, subject)

    by_observation: dict[str, list[CandidateFact]] = {}
    for _, value, _ in batched.read_committed(batched.catalogue.candidates):
        record = decode_record(value, expect=(CandidateFact, Command))
        if isinstance(record, CandidateFact) and record.observation_id is not None:
            by_observation.setdefault(record.observation_id, []).append(record)
    for turn in turns:
        found = by_observation.get(turn.observation_id, [])
        assert all(c.observed_at == turn.observed_at for c in found), turn.observation_id
        assert bool(found) == (turn.text not in (SAID[0], SAID[3])), turn.text
