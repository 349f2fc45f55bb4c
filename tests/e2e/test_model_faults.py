"""Model faults end to end: worker processes against the fake Messages API.

Every failure of the provider is retried within a short budget (one retry, 1.5 s timeout);
a transient fault then success applies the decision; an unusable answer never destroys a
fact; a spent budget sends the candidate to review with the error; a subject stuck in
retries holds only itself; the breaker and the concurrency cap spare a failing provider;
an extraction that cannot be had either waits (outage) or is dead-lettered (unusable).

Behaviour is scripted per subject: each case's candidate text carries a ``[case]`` tag
(each turn's text, for extraction), and a responder answers by it.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from slotwise.loadtest.fake_anthropic import (
    Delay,
    Failure,
    FakeAnthropic,
    Raw,
    RecordedRequest,
    Reply,
    Text,
    ToolUse,
    default_responder,
    overloaded,
    rate_limited,
    server_error,
)
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.runtime.deadletter import H_ERROR_REASON, H_SOURCE_OFFSET, H_SOURCE_TOPIC
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.codec import decode_record
from slotwise.topics.records import (
    MAX_CATEGORY_LENGTH,
    CandidateFact,
    Fact,
    Observation,
    ReviewItem,
    SupersessionEvent,
)
from tests.e2e.harness import Pipeline, WorkerProcess, store_call
from tests.e2e.test_write_path import _with_model

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

TIMEOUT_S = 1.5
AT = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)
INCUMBENT = "User is a backend engineer at Datadog."
MATCH = ToolUse({"memory": 1})


# ------------------------------------------------------------------------- the scripted model


@dataclass
class Case:
    """What the model does for one case: ``first`` replies in turn, then ``then`` forever."""

    first: Sequence[Reply] = ()
    then: Reply = MATCH


@dataclass
class PerCase:
    """A responder that answers each request by the ``[case]`` tag in its user turn."""

    cases: dict[str, Case]
    down: threading.Event = field(default_factory=threading.Event)
    _served: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: dict[str, Any]) -> Reply:
        asked = str(request.get("messages"))
        if self.down.is_set():
            return overloaded()
        for name, case in self.cases.items():
            if f"[{name}]" in asked:
                with self._lock:
                    served = self._served.get(name, 0)
                    self._served[name] = served + 1
                return case.first[served] if served < len(case.first) else case.then
        return default_responder(request)


def _asked(model: FakeAnthropic, case: str) -> list[RecordedRequest]:
    return [r for r in model.requests if f"[{case}]" in r.user_text]


# ------------------------------------------------------------------------------- the pipeline


def _start(pipeline: Pipeline, model: FakeAnthropic, **env: str) -> WorkerProcess:
    _with_model(pipeline, model)
    pipeline.extra_env.update(
        {"SLOTWISE_LLM_MAX_RETRIES": "1", "SLOTWISE_LLM_TIMEOUT_S": str(TIMEOUT_S), **env}
    )
    worker = pipeline.worker()
    worker.wait_healthy()
    return worker


def _candidate(subject: str, text: str, **fields: Any) -> CandidateFact:
    return CandidateFact(
        candidate_id=str(uuid.uuid4()), subject_id=subject, text=text, observed_at=AT, **fields
    )


def _turn(subject: str, text: str) -> Observation:
    return Observation(
        observation_id=str(uuid.uuid4()), subject_id=subject, text=text, observed_at=AT
    )


def _apply(pipeline: Pipeline, records: Sequence[CandidateFact], timeout: float = 60.0) -> None:
    ends = pipeline.publish(pipeline.catalogue.candidates, records)
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout)


def _seeded(pipeline: Pipeline, subjects: Sequence[str]) -> dict[str, Fact]:
    """One free-text fact per subject (no neighbours yet: no model call), by subject."""
    _apply(pipeline, [_candidate(s, INCUMBENT) for s in subjects])
    return {s: _only(_facts(pipeline, s)) for s in subjects}


def _question(subject: str, case: str) -> CandidateFact:
    """A candidate near the subject's seeded fact: the slot matcher asks the model."""
    return _candidate(
        subject,
        f"User starts at Stripe on Monday [{case}].",
        valid_from=datetime(2026, 3, 16, tzinfo=UTC),
    )


def _only(facts: Sequence[Fact]) -> Fact:
    (fact,) = facts
    return fact


def _facts(pipeline: Pipeline, subject: str) -> list[Fact]:
    facts = store_call(pipeline, "facts", subject, include_history=True)
    assert isinstance(facts, list)
    return facts


def _decided(pipeline: Pipeline, candidate: CandidateFact) -> StoredOutputs:
    blob = store_call(pipeline, "applied", candidate.subject_id, candidate.candidate_id)
    assert isinstance(blob, bytes), f"{candidate.text!r} was never decided"
    return StoredOutputs.decode(blob)


def _reviews(pipeline: Pipeline) -> dict[str, ReviewItem]:
    """Review items by candidate id."""
    found = {}
    for _, value, _ in pipeline.read_committed(pipeline.catalogue.review):
        item = decode_record(value, expect=(ReviewItem,))
        assert isinstance(item, ReviewItem)
        found[item.candidate.candidate_id] = item
    return found


def _events(pipeline: Pipeline) -> dict[str, SupersessionEvent]:
    """Supersession events by subject."""
    found = {}
    for _, value, _ in pipeline.read_committed(pipeline.catalogue.supersessions):
        event = decode_record(value, expect=(SupersessionEvent,))
        assert isinstance(event, SupersessionEvent)
        found[event.subject_id] = event
    return found


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _on_one_partition(count: int, partitions: int) -> list[str]:
    """Subjects the producer's default partitioner (CRC32 of the key) puts together."""
    names = [_name("s")]
    target = zlib.crc32(names[0].encode()) % partitions
    while len(names) < count:
        name = _name("s")
        if zlib.crc32(name.encode()) % partitions == target:
            names.append(name)
    return names


def _assert_reviewed_intact(
    pipeline: Pipeline, candidate: CandidateFact, incumbent: Fact, *error: str
) -> ReviewItem:
    """REVIEW with the model's error, on the review topic; nothing written, nothing retired."""
    decided = _decided(pipeline, candidate)
    assert decided.decision == "REVIEW", decided.reason
    item = _reviews(pipeline).get(candidate.candidate_id)
    assert item is not None, "the review item was never published"
    assert item.kind == "model_failure"
    assert item.candidate == candidate
    assert item.incumbent_fact_ids == (incumbent.fact_id,)
    assert all(part in item.reason for part in error), item.reason
    assert _facts(pipeline, candidate.subject_id) == [incumbent]
    return item


# ---------------------------------------------------------------------------------- slot match


def test_a_transient_fault_then_success_applies_the_decision(pipeline: Pipeline) -> None:
    cases = {
        "rate-limited": Case([rate_limited(retry_after=1.0)]),
        "overloaded": Case([overloaded()]),
        "server-error": Case([server_error()]),
        "timeout": Case([Delay(TIMEOUT_S * 2, MATCH)]),
    }
    with FakeAnthropic(responder=PerCase(cases)) as model:
        _start(pipeline, model)
        subjects = {case: _name(case) for case in cases}
        incumbents = _seeded(pipeline, list(subjects.values()))
        questions = {case: _question(s, case) for case, s in subjects.items()}
        _apply(pipeline, list(questions.values()))

    events = _events(pipeline)
    for case, subject in subjects.items():
        assert _decided(pipeline, questions[case]).decision == "SUPERSEDE", case
        assert len(_asked(model, case)) == 2, f"{case}: one failure, one retry"
        event = events[subject]
        assert (event.decided_by, event.old_fact_id) == ("llm", incumbents[subject].fact_id)
        assert {f.status for f in _facts(pipeline, subject)} == {"superseded", "current"}
    first, retry = _asked(model, "rate-limited")
    assert retry.received_at - first.received_at >= 1.0, "retry-after was not honoured"


def test_an_unusable_answer_destroys_nothing(pipeline: Pipeline) -> None:
    cases = {
        "malformed-tool-input": Case(then=ToolUse({"memory": ["1"]})),
        "prose-instead-of-tool": Case(then=Text("Memory 1, I think.")),
        "invented-number": Case(then=ToolUse({"memory": 9})),
        "unreadable-body": Case(then=Raw(200, b'{"type": "message", "content": [')),
        "not-a-message": Case(then=Raw(200, b'{"type": "message", "content": "1"}')),
    }
    with FakeAnthropic(responder=PerCase(cases)) as model:
        _start(pipeline, model)
        subjects = {case: _name(case) for case in cases}
        incumbents = _seeded(pipeline, list(subjects.values()))
        questions = {case: _question(s, case) for case, s in subjects.items()}
        _apply(pipeline, list(questions.values()))

    for case in ("malformed-tool-input", "prose-instead-of-tool", "invented-number"):
        # A rejected answer counts as NONE: both facts kept, the model asked once.
        subject = subjects[case]
        assert _decided(pipeline, questions[case]).decision == "ADD", case
        assert {f.status for f in _facts(pipeline, subject)} == {"current"}
        assert len(_facts(pipeline, subject)) == 2
        assert len(_asked(model, case)) == 1
    for case in ("unreadable-body", "not-a-message"):
        # No answer at all: a human decides; the incumbent stays as it was.
        subject = subjects[case]
        _assert_reviewed_intact(pipeline, questions[case], incumbents[subject], "malformed")
    assert _events(pipeline) == {}


def test_a_subject_stuck_in_retries_holds_only_itself_and_ends_in_review(
    pipeline: Pipeline,
) -> None:
    stuck, failing, *others = _on_one_partition(6, pipeline.catalogue.partitions)
    cases = {
        "stuck": Case(then=Delay(TIMEOUT_S * 3, MATCH)),
        "failing": Case(then=server_error()),
        **{f"flowing-{i}": Case() for i in range(len(others))},
    }
    with FakeAnthropic(responder=PerCase(cases)) as model:
        _start(pipeline, model)
        incumbents = _seeded(pipeline, [stuck, failing, *others])
        held = _question(stuck, "stuck")
        spent = _question(failing, "failing")
        flowing = [_question(s, f"flowing-{i}") for i, s in enumerate(others)]
        started = time.monotonic()
        ends = pipeline.publish(pipeline.catalogue.candidates, [held, spent, *flowing])
        assert len(ends) == 1, "the subjects share one partition"
        seen = _first_applied(pipeline, [held, spent, *flowing], timeout=30.0)
        pipeline.wait_committed(pipeline.catalogue.candidates, ends)

    # Other subjects of the same partition, published after it, were applied meanwhile.
    assert max(seen[c.candidate_id] for c in flowing) < seen[held.candidate_id]
    assert seen[held.candidate_id] - started >= 2 * TIMEOUT_S, "two attempts, both timed out"
    for candidate in flowing:
        assert _decided(pipeline, candidate).decision == "SUPERSEDE"
    # The spent budget: review with the error, nothing written, nothing retired.
    _assert_reviewed_intact(pipeline, held, incumbents[stuck], "unavailable", "timeout")
    _assert_reviewed_intact(pipeline, spent, incumbents[failing], "unavailable", "server_error")
    assert len(_asked(model, "stuck")) == len(_asked(model, "failing")) == 2


def _first_applied(
    pipeline: Pipeline, candidates: Sequence[CandidateFact], timeout: float
) -> dict[str, float]:
    """When (monotonic) each candidate's decision was first seen in Redis."""

    async def watch() -> dict[str, float]:
        store = RedisStore.from_url(pipeline.settings.redis_url, prefix=pipeline.redis_prefix)
        seen: dict[str, float] = {}
        deadline = time.monotonic() + timeout
        try:
            while len(seen) < len(candidates) and time.monotonic() < deadline:
                for c in candidates:
                    if c.candidate_id not in seen and await store.applied(
                        c.subject_id, c.candidate_id
                    ):
                        seen[c.candidate_id] = time.monotonic()
                await asyncio.sleep(0.02)
            return seen
        finally:
            await store.close()

    seen = asyncio.run(watch())
    missing = [c.text for c in candidates if c.candidate_id not in seen]
    assert not missing, f"never applied: {missing}"
    return seen


def test_the_breaker_and_the_concurrency_cap_spare_a_failing_provider(
    pipeline: Pipeline,
) -> None:
    count, retries, cap = 12, 3, 2
    cases = {f"c{i}": Case(then=ToolUse({"memory": "NONE"})) for i in range(count)}
    responder = PerCase(cases)
    with FakeAnthropic(responder=responder, latency_s=0.2) as model:
        _start(pipeline, model, SLOTWISE_LLM_MAX_RETRIES=str(retries),
               SLOTWISE_LLM_MAX_CONCURRENCY=str(cap))  # fmt: skip
        subjects = [_name("b") for _ in range(count)]
        incumbents = _seeded(pipeline, subjects)
        # A healthy provider, many subjects at once: never more than the cap in flight.
        _apply(pipeline, [_question(s, f"c{i}") for i, s in enumerate(subjects)])
        assert model.max_concurrent == cap
        healthy = len(model.requests)
        # The provider fails everything: the breaker opens and later calls fail fast.
        responder.down.set()
        failing = [_question(s, f"c{i}") for i, s in enumerate(subjects)]
        _apply(pipeline, failing)
        sent = len(model.requests) - healthy

    assert model.max_concurrent == cap
    assert sent < count * (retries + 1) / 2, f"{sent} requests reached a failing provider"
    reasons = [_decided(pipeline, c).reason or "" for c in failing]
    assert any("circuit_open" in r for r in reasons), reasons
    reviews = _reviews(pipeline)
    for candidate, subject in zip(failing, subjects, strict=True):
        item = reviews[candidate.candidate_id]
        assert _decided(pipeline, candidate).decision == "REVIEW"
        assert item.kind == "model_failure"
        assert incumbents[subject].fact_id in item.incumbent_fact_ids
        assert len(_facts(pipeline, subject)) == 2  # the seed and the healthy phase's fact


# ---------------------------------------------------------------------------------- extraction


@pytest.mark.slow  # the breaker's 30 s cooldown, then the probe
def test_an_extraction_outage_holds_the_turn_reports_unhealthy_and_recovers(
    pipeline: Pipeline,
) -> None:
    responder = PerCase({})
    with FakeAnthropic(responder=responder) as model:
        worker = _start(pipeline, model)
        responder.down.set()
        subject = _name("outage")
        turn = _turn(subject, "I speak Basque.")
        pipeline.publish(pipeline.catalogue.observations, [turn])
        _wait(lambda: worker.health() == 503, 30.0, "the worker never reported the outage")
        failed = len(model.requests)
        assert failed >= 2 and not store_call(pipeline, "observation_applied", subject,
                                              turn.observation_id)  # fmt: skip
        responder.down.clear()
        # Held, not dropped: applied once the breaker's probe finds the provider back.
        applied = store_call(pipeline, "wait_for_observation", subject, turn.observation_id, 60.0)
        assert applied, worker.log_tail()
        _wait(lambda: worker.health() == 200, 15.0, "the worker never recovered")

    assert [f.text for f in _facts(pipeline, subject)] == ["User said: I speak Basque."]
    assert pipeline.read_committed(pipeline.catalogue.deadletter, idle_s=1.0) == []


def test_a_turn_the_provider_always_fails_on_does_not_hold_other_subjects(
    pipeline: Pipeline,
) -> None:
    """A provider that is up for everyone but fails on one turn (a 500 on every attempt):
    the other subjects of the partition, published after it, must still be applied."""
    poisoned, healthy = _on_one_partition(2, pipeline.catalogue.partitions)
    with FakeAnthropic(responder=PerCase({"poison": Case(then=server_error())})) as model:
        _start(pipeline, model)
        poison = _turn(poisoned, "I speak Basque [poison].")
        after = _turn(healthy, "I speak Catalan.")
        ends = pipeline.publish(pipeline.catalogue.observations, [poison, after])
        assert len(ends) == 1, "the subjects share one partition"
        applied = store_call(pipeline, "wait_for_observation", healthy, after.observation_id, 15.0)
        asked = len(_asked(model, "poison"))

    assert applied, f"{healthy}'s turn is held behind {poisoned}'s ({asked} failed calls)"


def test_an_unusable_extraction_is_dead_lettered_with_the_model_error(
    pipeline: Pipeline,
) -> None:
    cases = {
        "prose": Case(then=Text("I'd rather not call tools today.")),
        "refused": Case(then=Failure(400, "invalid_request_error", "prompt is too long")),
    }
    with FakeAnthropic(responder=PerCase(cases)) as model:
        _start(pipeline, model)
        subject = _name("ex")
        turns = [_turn(subject, f"I speak Basque [{case}].") for case in cases]
        good = _turn(subject, "I speak Catalan.")
        ends = pipeline.publish(pipeline.catalogue.observations, [*turns, good])
        pipeline.wait_committed(pipeline.catalogue.observations, ends)
        assert store_call(pipeline, "wait_for_observation", subject, good.observation_id, 30.0)

    letters = {
        int(dict(h)[H_SOURCE_OFFSET]): dict(h)[H_ERROR_REASON].decode()
        for _, _, h in pipeline.read_committed(pipeline.catalogue.deadletter)
        if dict(h)[H_SOURCE_TOPIC].decode() == pipeline.catalogue.observations
    }
    assert sorted(letters.values()) == ["model_malformed", "model_rejected"]
    assert len(_asked(model, "prose")) == 2, "a malformed answer is asked for once more"
    assert len(_asked(model, "refused")) == 1, "a refused request is not retried"
    assert [f.text for f in _facts(pipeline, subject)] == ["User said: I speak Catalan."]


def test_an_extracted_item_the_records_refuse_costs_only_itself(pipeline: Pipeline) -> None:
    """One bad item (a category too long for the index, a date outside the calendar the
    records accept) must be dropped or repaired; the turn's other facts still land."""
    item = {
        "attribute": "languages",
        "value": "Basque",
        "text": "User speaks Basque.",
        "category": "languages",
        "valid_from": None,
        "confidence": 0.9,
        "importance": 0.5,
    }
    facts = [
        item,
        {**item, "attribute": None, "value": None, "text": "User collects stamps.",
         "category": "c" * (MAX_CATEGORY_LENGTH + 1)},
        {**item, "value": "Catalan", "text": "User speaks Catalan.", "valid_from": "0001-01-01"},
    ]  # fmt: skip
    cases = {"items": Case(then=ToolUse({"facts": facts}))}
    with FakeAnthropic(responder=PerCase(cases)) as model:
        _start(pipeline, model)
        subject = _name("items")
        turn = _turn(subject, "I speak Basque and Catalan and collect stamps [items].")
        pipeline.publish(pipeline.catalogue.observations, [turn])
        applied = store_call(pipeline, "wait_for_observation", subject, turn.observation_id, 15.0)

    letters = [dict(h)[H_ERROR_REASON] for _, _, h in pipeline.read_committed(
        pipeline.catalogue.deadletter, idle_s=1.0)]  # fmt: skip
    assert applied and letters == [], f"the whole turn was lost: {letters}"
    assert len(_asked(model, "items")) == 1
    kept = {f.text for f in _facts(pipeline, subject)}
    assert "User speaks Basque." in kept


def _wait(check: Callable[[], bool], timeout: float, failure: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, failure
        time.sleep(0.2)
