"""The write path end to end: real Kafka, Redis, Milvus Lite and worker processes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from slotwise.loadtest.fake_anthropic import FakeAnthropic, ToolUse
from slotwise.processors.model import stable_id
from slotwise.streams.dev.demo import DEMO_TURNS, observations
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.codec import decode_record
from slotwise.topics.records import CandidateFact, Command, Fact, ReviewItem, SupersessionEvent
from tests.e2e.harness import Pipeline, store_call

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]


def _facts(pipeline: Pipeline, subject: str) -> list[Fact]:
    facts = store_call(pipeline, "facts", subject, include_history=True)
    assert isinstance(facts, list)
    return facts


def _current(pipeline: Pipeline, subject: str, attribute: str | None) -> list[Fact]:
    return [
        f for f in _facts(pipeline, subject) if f.attribute == attribute and f.status == "current"
    ]


def _events(pipeline: Pipeline, subject: str) -> list[SupersessionEvent]:
    found = []
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.supersessions):
        if key == subject.encode():
            event = decode_record(value, expect=(SupersessionEvent,))
            assert isinstance(event, SupersessionEvent)
            found.append(event)
    return found


def _decision(pipeline: Pipeline, subject: str, candidate_id: str) -> StoredOutputs:
    blob = store_call(pipeline, "applied", subject, candidate_id)
    assert isinstance(blob, bytes), f"candidate {candidate_id} was never applied"
    return StoredOutputs.decode(blob)


def _candidate(subject: str, text: str, at: str, **fields: object) -> CandidateFact:
    moment = datetime.fromisoformat(at).replace(tzinfo=UTC)
    return CandidateFact(
        candidate_id=str(uuid.uuid4()),
        subject_id=subject,
        text=text,
        observed_at=moment,
        **fields,  # type: ignore[arg-type]
    )


def _apply(pipeline: Pipeline, candidates: list[CandidateFact]) -> None:
    ends = pipeline.publish(pipeline.catalogue.candidates, candidates)
    pipeline.wait_committed(pipeline.catalogue.candidates, ends)


def test_the_demo_conversation_makes_every_decision_with_offline_providers(
    pipeline: Pipeline,
) -> None:
    subject = f"ana-{uuid.uuid4().hex[:6]}"
    turns = observations(subject)
    pipeline.worker().wait_healthy()
    pipeline.publish(pipeline.catalogue.observations, turns)
    applied = store_call(pipeline, "wait_for_observation", subject, turns[-1].observation_id, 120.0)
    assert applied is True

    by_observation: dict[str, list[CandidateFact]] = {}
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.candidates):
        record = decode_record(value, expect=(CandidateFact, Command))
        if key == subject.encode() and isinstance(record, CandidateFact):
            by_observation.setdefault(record.observation_id or "", []).append(record)
    for turn, spec in zip(turns, DEMO_TURNS, strict=True):
        made = [
            _decision(pipeline, subject, c.candidate_id).decision
            for c in by_observation.get(turn.observation_id, [])
        ]
        assert tuple(made) == spec.expect, turn.text

    (employer,) = _current(pipeline, subject, "employer")
    assert employer.value == "Stripe"
    assert employer.valid_from == datetime(2026, 3, 16, tzinfo=UTC)  # "on Monday"
    (datadog,) = [f for f in _facts(pipeline, subject) if f.value == "Datadog"]
    assert datadog.status == "superseded"
    assert datadog.valid_to == employer.valid_from
    assert datadog.superseded_by == employer.fact_id and employer.supersedes == datadog.fact_id
    assert [f.value for f in _current(pipeline, subject, "home_city")] == ["Lisbon"]
    assert [f.value for f in _current(pipeline, subject, "email")] == ["ana@example.com"]
    assert {f.value for f in _current(pipeline, subject, "languages")} == {"Portuguese", "Spanish"}

    events = _events(pipeline, subject)
    assert sorted((e.attribute, e.old_value, e.new_value) for e in events) == [
        ("database", "PostgreSQL", "MySQL"),
        ("employer", "Datadog", "Stripe"),
    ]
    assert all(e.decided_by == "exact" for e in events)
    reviews = [
        decode_record(v, expect=(ReviewItem,))
        for k, v, _ in pipeline.read_committed(pipeline.catalogue.review)
        if k == subject.encode()
    ]
    assert [r.kind for r in reviews if isinstance(r, ReviewItem)] == ["high_stakes"]


def test_structured_candidates_take_every_decision_and_keep_history(pipeline: Pipeline) -> None:
    subject = f"imp-{uuid.uuid4().hex[:6]}"
    pipeline.worker().wait_healthy()
    first = _candidate(
        subject,
        "User lives in Porto.",
        "2026-01-01T00:00:00",
        attribute="home_city",
        value="Porto",
        confidence=0.9,
    )
    again = _candidate(
        subject,
        "User lives in Porto.",
        "2026-01-05T00:00:00",
        attribute="home_city",
        value="Porto",
        confidence=0.9,
    )
    richer = _candidate(
        subject,
        "User lives in Porto, in the Foz district.",
        "2026-01-06T00:00:00",
        attribute="home_city",
        value="Porto",
        confidence=0.9,
    )
    moved = _candidate(
        subject,
        "User lives in Madrid.",
        "2026-02-01T00:00:00",
        attribute="home_city",
        value="Madrid",
        confidence=0.9,
    )
    late = _candidate(
        subject,
        "User lives in Braga.",
        "2026-01-20T00:00:00",
        attribute="home_city",
        value="Braga",
        confidence=0.9,
        valid_from=datetime(2025, 6, 1, tzinfo=UTC),
    )
    lang_a = _candidate(
        subject, "User speaks Basque.", "2026-01-01T00:00:00", attribute="languages", value="Basque"
    )
    lang_b = _candidate(
        subject,
        "User speaks Catalan.",
        "2026-01-02T00:00:00",
        attribute="languages",
        value="Catalan",
    )
    phone = _candidate(
        subject,
        "User's phone is +351 900 000 000.",
        "2026-01-01T00:00:00",
        attribute="phone",
        value="+351900000000",
        confidence=0.95,
    )
    phone_again = _candidate(
        subject,
        "User's phone is +351 900 000 000.",
        "2026-01-02T00:00:00",
        attribute="phone",
        value="+351900000000",
        confidence=0.95,
    )
    phone_other = _candidate(
        subject,
        "User's phone is +34 600 000 000.",
        "2026-03-01T00:00:00",
        attribute="phone",
        value="+34600000000",
        confidence=0.8,
    )
    batch = [first, again, richer, moved, late, lang_a, lang_b, phone, phone_again, phone_other]
    _apply(pipeline, batch)

    decided = [_decision(pipeline, subject, c.candidate_id).decision for c in batch]
    assert decided == [
        "ADD",
        "NOOP",
        "UPDATE",
        "SUPERSEDE",
        "ADD",
        "ADD",
        "ADD",
        "ADD",
        "NOOP",
        "REVIEW",
    ]
    (home,) = _current(pipeline, subject, "home_city")
    assert home.value == "Madrid"
    by_value = {f.value: f for f in _facts(pipeline, subject) if f.attribute == "home_city"}
    assert by_value["Porto"].status == "superseded"
    assert by_value["Porto"].text == "User lives in Porto, in the Foz district."
    assert by_value["Porto"].verification_count == 2
    assert by_value["Braga"].status == "history"  # arrived late: closed history, supersedes nothing
    assert by_value["Braga"].valid_to is not None and by_value["Braga"].supersedes is None
    assert [f.value for f in _current(pipeline, subject, "phone")] == ["+351900000000"]
    assert len(_events(pipeline, subject)) == 1


def test_replaying_the_same_candidates_changes_nothing(pipeline: Pipeline) -> None:
    subject = f"rep-{uuid.uuid4().hex[:6]}"
    pipeline.worker().wait_healthy()
    batch = [
        _candidate(
            subject,
            "User works at Datadog.",
            "2026-01-01T00:00:00",
            attribute="employer",
            value="Datadog",
        ),
        _candidate(
            subject,
            "User works at Stripe.",
            "2026-02-01T00:00:00",
            attribute="employer",
            value="Stripe",
        ),
    ]
    _apply(pipeline, batch)
    before = _facts(pipeline, subject)
    _apply(pipeline, batch)  # the same candidate ids again, as after a producer retry
    assert _facts(pipeline, subject) == before
    events = _events(pipeline, subject)
    assert len(events) == 2 and events[0].event_id == events[1].event_id


@pytest.fixture
def model() -> FakeAnthropic:
    with FakeAnthropic() as fake:
        yield fake  # type: ignore[misc]


def _with_model(pipeline: Pipeline, model: FakeAnthropic) -> None:
    pipeline.extra_env.update(
        {
            "SLOTWISE_ANTHROPIC_API_KEY": "test-key",
            "SLOTWISE_ANTHROPIC_BASE_URL": model.base_url,
            "SLOTWISE_LLM_TIMEOUT_S": "5",
        }
    )


def test_the_model_matches_a_free_text_slot_and_supersedes(
    pipeline: Pipeline, model: FakeAnthropic
) -> None:
    _with_model(pipeline, model)
    subject = f"llm-{uuid.uuid4().hex[:6]}"
    pipeline.worker().wait_healthy()
    datadog = _candidate(subject, "User is a backend engineer at Datadog.", "2026-03-01T00:00:00")
    _apply(pipeline, [datadog])
    model.script(ToolUse({"memory": 1}))
    stripe = _candidate(
        subject,
        "User starts at Stripe on Monday.",
        "2026-03-14T10:00:00",
        valid_from=datetime(2026, 3, 16, tzinfo=UTC),
    )
    _apply(pipeline, [stripe])

    assert _decision(pipeline, subject, stripe.candidate_id).decision == "SUPERSEDE"
    (event,) = _events(pipeline, subject)
    assert event.decided_by == "llm"
    assert event.old_text == datadog.text and event.new_text == stripe.text
    assert event.valid_from == datetime(2026, 3, 16, tzinfo=UTC)
    asked = [r for r in model.requests if r.forced_tool == "answer_slot"]
    assert asked, "the slot matcher never asked the model"
    old_id = stable_id("fact", datadog.candidate_id)
    assert all(old_id not in r.raw for r in asked), "a fact id reached the prompt"


@pytest.mark.parametrize(
    "answer",
    [{"memory": 7}, {"memory": "the first one, I think"}, {"memory": "FOREIGN_ID"}],
    ids=["number-off-the-list", "prose", "another-subjects-id"],
)
def test_a_bad_model_answer_changes_nothing(
    pipeline: Pipeline, model: FakeAnthropic, answer: dict[str, object]
) -> None:
    _with_model(pipeline, model)
    subject = f"bad-{uuid.uuid4().hex[:6]}"
    other = f"other-{uuid.uuid4().hex[:6]}"
    pipeline.worker().wait_healthy()
    stranger = _candidate(other, "User lives in Lisbon.", "2026-03-01T00:00:00")
    home = _candidate(subject, "User lives in Lisbon.", "2026-03-01T00:00:00")
    _apply(pipeline, [stranger, home])
    if answer["memory"] == "FOREIGN_ID":
        answer = {"memory": stable_id("fact", stranger.candidate_id)}
    model.script(ToolUse(answer))
    trip = _candidate(subject, "User visited Lisbon in March.", "2026-04-02T00:00:00")
    _apply(pipeline, [trip])

    assert _decision(pipeline, subject, trip.candidate_id).decision == "ADD"
    assert {f.text for f in _facts(pipeline, subject) if f.status == "current"} == {
        home.text,
        trip.text,
    }
    assert [f.status for f in _facts(pipeline, other)] == ["current"]
    assert _events(pipeline, subject) == []


def test_a_lisbon_trip_never_retires_the_lisbon_home(
    pipeline: Pipeline, model: FakeAnthropic
) -> None:
    _with_model(pipeline, model)  # the default responder answers NONE
    subject = f"lis-{uuid.uuid4().hex[:6]}"
    pipeline.worker().wait_healthy()
    home = _candidate(
        subject,
        "User lives in Lisbon.",
        "2026-01-01T00:00:00",
        attribute="home_city",
        value="Lisbon",
    )
    trip = _candidate(subject, "User visited Lisbon in March.", "2026-04-02T00:00:00")
    _apply(pipeline, [home, trip])
    assert [f.value for f in _current(pipeline, subject, "home_city")] == ["Lisbon"]
    assert _decision(pipeline, subject, trip.candidate_id).decision == "ADD"
    assert _events(pipeline, subject) == []
