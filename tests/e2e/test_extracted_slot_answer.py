"""A free-text fact's slot question answered in the extraction call, end to end.

Two runs of one subject's turns through a worker and the fake model: one lists
nothing in the extraction request (``SLOTWISE_EXTRACT_INCUMBENTS=0``, the slot
question asked per free-text fact with neighbours, as before), one lists the
subject's stored facts, and extraction answers the question. The second asks no
slot question and ends with the same facts, decided alike.
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
    "I visited Kyoto in March.",
    "I work at Datadog as a backend engineer.",
    "I visited Osaka in April.",  # a neighbour of Kyoto's visit: a slot question
    "I visited Kyoto in March.",  # a restatement: the question names the stored fact
)


@pytest.fixture
def model() -> Iterator[FakeAnthropic]:
    warm()
    with FakeAnthropic(responder=bench) as fake:
        yield fake


def _run(pipeline: Pipeline, model: FakeAnthropic, subject: str, shown: int) -> None:
    pipeline.extra_env.update(
        {
            "SLOTWISE_ANTHROPIC_API_KEY": "test-key",
            "SLOTWISE_ANTHROPIC_BASE_URL": model.base_url,
            "SLOTWISE_LLM_TIMEOUT_S": "10",
            "SLOTWISE_EXTRACT_GATE": "false",
            "SLOTWISE_EXTRACT_INCUMBENTS": str(shown),
        }
    )
    pipeline.worker().wait_healthy()
    base_timestamp_ms = int(time.time() * 1000)
    # One turn at a time, each applied before the next is said: as a person chats.
    for n, text in enumerate(SAID):
        turn = Observation(
            observation_id=f"{subject}-t{n}",
            subject_id=subject,
            session_id=f"{subject}-session",
            text=text,
            observed_at=T0 + timedelta(minutes=n),
        )
        pipeline.publish(
            pipeline.catalogue.observations, [turn], base_timestamp_ms=base_timestamp_ms + n
        )
        assert store_call(pipeline, "wait_for_observation", subject, turn.observation_id, 120.0)


def _facts(pipeline: Pipeline, subject: str) -> list[dict[str, object]]:
    facts = store_call(pipeline, "facts", subject, include_history=True)
    assert isinstance(facts, list) and facts
    return sorted(
        (
            f.model_dump(exclude={"recorded_at", "last_verified"})
            for f in facts
            if isinstance(f, Fact)
        ),
        key=lambda f: str(f["fact_id"]),
    )


def _slot_questions(model: FakeAnthropic, since: int) -> int:
    return sum(r.forced_tool == "answer_slot" for r in model.requests[since:])


def test_the_slot_question_answered_in_extraction_skips_the_call_and_decides_alike(
    pipeline_factory: PipelineFactory, model: FakeAnthropic
) -> None:
    subject = f"fold-{uuid.uuid4().hex[:6]}"

    asked = pipeline_factory()
    _run(asked, model, subject, 0)
    questions = _slot_questions(model, 0)
    assert questions == 2  # Osaka against Kyoto; Kyoto again against both
    before = len(model.requests)

    folded = pipeline_factory()
    _run(folded, model, subject, 40)
    assert _slot_questions(model, before) == 0
    extractions = [r.user_text for r in model.requests[before:]]
    assert extractions[0].startswith("Observation time: ")  # nothing stored yet
    assert extractions[3].startswith(
        "Memories already stored about the user:\n  1. User visited Kyoto in March.\n"
    )

    assert _facts(folded, subject) == _facts(asked, subject)
    kyoto_again = [
        record
        for _, value, _ in folded.read_committed(folded.catalogue.candidates)
        if isinstance(
            record := decode_record(value, expect=(CandidateFact, Command)), CandidateFact
        )
        and record.observation_id == f"{subject}-t3"
    ]
    [restated] = kyoto_again
    assert restated.incumbent_match is not None
    stored_kyoto = [
        f for f in _facts(folded, subject) if f["text"] == SAID[0].replace("I", "User", 1)
    ]
    assert restated.incumbent_match.fact_id in {f["fact_id"] for f in stored_kyoto}
