"""Facts for the lifecycle policy tests: stored the way the write path stores them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from slotwise.processors.resolve import fact_id_for
from slotwise.topics.records import CandidateFact, Command, Fact, ReviewAction, Scalar

SUBJECT = "user-9"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def stored(
    name: str,
    text: str,
    *,
    day: int = 1,
    attribute: str | None = None,
    value: Scalar | None = None,
    category: str | None = "job",
    **fields: object,
) -> Fact:
    """A current fact whose id is the one the write path gives candidate ``name``."""
    candidate = CandidateFact(
        candidate_id=name, subject_id=SUBJECT, text=text, observed_at=T0, attribute=attribute
    )
    moment = T0 + timedelta(days=day - 1)
    body: dict[str, object] = {
        "fact_id": fact_id_for(candidate),
        "subject_id": SUBJECT,
        "attribute": attribute,
        "value": value,
        "text": text,
        "category": category,
        "status": "current",
        "valid_from": moment,
        "observed_at": moment,
        "recorded_at": moment,
        "source": "chat",
        "confidence": 0.8,
        "importance": 0.5,
        "candidate_id": name,
    }
    body.update(fields)
    return Fact.model_validate(body)


def decision(action: ReviewAction, review_id: str, value: Scalar | None = None) -> Command:
    return Command(
        command_id=f"cmd-{action}-{review_id}",
        subject_id=SUBJECT,
        command="review",
        issued_at=T0 + timedelta(days=30),
        review_id=review_id,
        action=action,
        value=value,
    )
