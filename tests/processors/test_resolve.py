"""The resolution policy, decision by decision (pure: no store, no clock)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from slotwise.processors.model import Decision, Resolution, stable_id
from slotwise.processors.resolve import (
    SubjectMismatch,
    adds_detail,
    fact_id_for,
    normalise,
    resolve,
)
from slotwise.processors.schema import AttributeSchema, AttributeSpec
from slotwise.topics.records import CandidateFact, Fact

SCHEMA = AttributeSchema.parse(
    {
        "version": "test",
        "attributes": {
            "employer": {"cardinality": "one", "category": "job", "half_life_days": 365},
            "home_city": {"cardinality": "one", "category": "location", "half_life_days": None},
            "language": {"cardinality": "many", "category": "identity", "half_life_days": None},
            "date_of_birth": {
                "cardinality": "one",
                "category": "identity",
                "half_life_days": None,
                "stakes": "high",
            },
            "allergy": {
                "cardinality": "many",
                "category": "health",
                "half_life_days": None,
                "stakes": "high",
            },
        },
    }
)
NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)
JAN = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
MODEL = "all-MiniLM-L6-v2"


def spec(name: str) -> AttributeSpec:
    found = SCHEMA.get(name)
    assert found is not None
    return found


def candidate(
    cid: str,
    attribute: str | None,
    value: str | None,
    text: str,
    *,
    observed_at: datetime = JAN,
    valid_from: datetime | None = None,
    confidence: float = 0.8,
    subject: str = "user-42",
) -> CandidateFact:
    return CandidateFact.model_validate(
        {
            "schema": "candidate/1",
            "candidate_id": cid,
            "subject_id": subject,
            "attribute": attribute,
            "value": value,
            "text": text,
            "observed_at": observed_at,
            "valid_from": valid_from,
            "confidence": confidence,
            "observation_id": f"obs-{cid}",
        }
    )


def decide(cand: CandidateFact, incumbents: list[Fact], **kwargs: Any) -> Resolution:
    return resolve(
        cand,
        kwargs.pop("spec", SCHEMA.get(cand.attribute)),
        incumbents,
        decided_by=kwargs.pop("decided_by", "exact"),
        now=kwargs.pop("now", NOW),
        embedding_model=MODEL,
    )


def stored(cand: CandidateFact, **update: Any) -> Fact:
    """The fact a candidate became when it was added (optionally aged further)."""
    [fact] = decide(cand, []).facts
    return fact.model_copy(update=update)


def test_empty_slot_adds_a_current_fact_with_its_vector_row() -> None:
    cand = candidate("c1", "employer", "Datadog", "User works at Datadog.")
    result = decide(cand, [])
    assert result.decision is Decision.ADD
    assert result.decided_by == "exact"
    assert result.reason.startswith("exact:")
    [fact] = result.facts
    assert fact.fact_id == stable_id("fact", "c1") == fact_id_for(cand)
    assert fact.status == "current"
    assert fact.valid_from == JAN  # no valid_from: the observation time
    assert fact.recorded_at == NOW
    assert fact.verification_count == 0
    assert fact.last_verified is None
    assert fact.embedding_model == MODEL
    assert fact.category == "job"  # from the schema when extraction gave none
    assert fact.observation_id == "obs-c1"
    [row] = result.vector_rows
    assert (row.fact_id, row.subject_id, row.text) == (fact.fact_id, "user-42", fact.text)
    assert result.supersessions == () and result.review is None


def test_normalised_comparison() -> None:
    assert normalise("  Stripe.  ") == normalise("stripe") == "stripe"
    assert normalise("New\tYork   City") == "new york city"
    assert normalise("STRASSE") == normalise("straße")


def test_repeated_fact_is_a_noop_that_refreshes_verification() -> None:
    old = stored(candidate("c1", "employer", "Datadog", "User works at Datadog."))
    later = JAN + timedelta(days=30)
    again = candidate("c2", "employer", " datadog ", "I work at Datadog", observed_at=later)
    result = decide(again, [old])
    assert result.decision is Decision.NOOP
    [refreshed] = result.facts
    assert refreshed.fact_id == old.fact_id
    assert refreshed.last_verified == later
    assert refreshed.verification_count == 1
    assert refreshed.text == old.text and refreshed.status == "current"
    assert result.vector_rows == () and result.supersessions == ()


def test_noop_never_moves_last_verified_backwards() -> None:
    verified = JAN + timedelta(days=60)
    old = stored(
        candidate("c1", "employer", "Datadog", "User works at Datadog."),
        last_verified=verified,
        verification_count=3,
    )
    late = candidate("c2", "employer", "Datadog", "User works at Datadog.", observed_at=JAN)
    [refreshed] = decide(late, [old]).facts
    assert refreshed.last_verified == verified
    assert refreshed.verification_count == 4


def test_same_value_with_more_detail_updates_the_incumbent_in_place() -> None:
    old = stored(candidate("c1", "employer", "Datadog", "User works at Datadog."))
    richer = candidate(
        "c2",
        "employer",
        "Datadog",
        "User works at Datadog as a backend engineer.",
        observed_at=JAN + timedelta(days=1),
        confidence=0.95,
    )
    result = decide(richer, [old])
    assert result.decision is Decision.UPDATE
    [merged] = result.facts
    assert merged.fact_id == old.fact_id  # no new fact id
    assert merged.text == richer.text
    assert merged.verification_count == 1
    assert merged.last_verified == richer.observed_at
    assert merged.confidence == 0.95
    [row] = result.vector_rows  # re-embedded: the text changed
    assert row.text == richer.text and row.fact_id == old.fact_id


def test_a_paraphrase_is_not_more_detail() -> None:
    assert not adds_detail("User is employed by Datadog.", "User works at Datadog.")
    assert not adds_detail("User works at Datadog.", "User works at Datadog as an engineer.")
    assert adds_detail("User works at Datadog as an engineer.", "User works at Datadog.")
    old = stored(candidate("c1", "employer", "Datadog", "User works at Datadog."))
    paraphrase = candidate("c2", "employer", "Datadog", "User is employed by Datadog.")
    assert decide(paraphrase, [old]).decision is Decision.NOOP


def test_datadog_then_stripe_on_monday_supersedes_from_that_monday() -> None:
    old = stored(candidate("c1", "employer", "Datadog", "User is a backend engineer at Datadog."))
    saturday = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)
    monday = datetime(2026, 3, 16, tzinfo=UTC)
    new = candidate(
        "c2",
        "employer",
        "Stripe",
        "I start at Stripe on Monday",
        observed_at=saturday,
        valid_from=monday,
    )
    result = decide(new, [old])
    assert result.decision is Decision.SUPERSEDE
    assert result.decided_by == "exact"
    fresh, retired = result.facts
    assert fresh.fact_id == fact_id_for(new)
    assert fresh.valid_from == monday and fresh.status == "current"
    assert fresh.supersedes == old.fact_id
    assert retired.fact_id == old.fact_id
    assert retired.status == "superseded"
    assert retired.valid_to == monday
    assert retired.superseded_by == fresh.fact_id
    assert retired.text == old.text and retired.valid_from == old.valid_from  # history kept
    [event] = result.supersessions
    assert event.event_id == stable_id("supersession", old.fact_id, fresh.fact_id)
    assert (event.old_value, event.new_value) == ("Datadog", "Stripe")
    assert (event.old_fact_id, event.new_fact_id) == (old.fact_id, fresh.fact_id)
    assert event.decided_by == "exact"
    assert event.valid_from == monday
    assert event.recorded_at == NOW
    assert event.observation_id == "obs-c2"
    assert "Datadog" in event.reason and "Stripe" in event.reason
    assert [r.fact_id for r in result.vector_rows] == [fresh.fact_id]


def test_same_instant_later_write_wins() -> None:
    old = stored(candidate("c1", "home_city", "Porto", "User lives in Porto."))
    new = candidate("c2", "home_city", "Lisbon", "User lives in Lisbon.", observed_at=JAN)
    result = decide(new, [old])
    assert result.decision is Decision.SUPERSEDE
    assert result.facts[1].valid_to == JAN


def test_out_of_order_arrival_is_stored_as_closed_history() -> None:
    march = datetime(2026, 3, 1, tzinfo=UTC)
    current = stored(
        candidate("c2", "home_city", "Lisbon", "User lives in Lisbon.", observed_at=march)
    )
    late = candidate("c1", "home_city", "Porto", "User lives in Porto.", observed_at=JAN)
    result = decide(late, [current])
    assert result.decision is Decision.ADD
    assert "out-of-order" in result.reason
    [history] = result.facts  # the incumbent is untouched
    assert history.fact_id == fact_id_for(late)
    assert history.status == "history"
    assert history.valid_from == JAN and history.valid_to == march
    assert history.supersedes is None and history.superseded_by is None
    assert result.supersessions == ()
    assert [r.fact_id for r in result.vector_rows] == [history.fact_id]


def test_many_valued_attribute_accumulates() -> None:
    first = stored(candidate("c1", "language", "Portuguese", "User speaks Portuguese."))
    second = candidate("c2", "language", "English", "User speaks English.")
    result = decide(second, [first])
    assert result.decision is Decision.ADD
    assert [f.fact_id for f in result.facts] == [fact_id_for(second)]
    assert result.facts[0].status == "current" and result.supersessions == ()
    again = candidate("c3", "language", "portuguese", "User speaks Portuguese.")
    assert decide(again, [first, stored(second)]).decision is Decision.NOOP


def test_high_stakes_contradiction_of_a_verified_incumbent_goes_to_review() -> None:
    old = stored(
        candidate("c1", "date_of_birth", "1990-04-02", "User was born on 2 April 1990."),
        verification_count=2,
    )
    new = candidate(
        "c2",
        "date_of_birth",
        "1991-04-02",
        "User was born in 1991.",
        observed_at=JAN + timedelta(days=3),
    )
    result = decide(new, [old])
    assert result.decision is Decision.REVIEW
    assert result.facts == () and result.supersessions == () and result.vector_rows == ()
    review = result.review
    assert review is not None
    assert review.kind == "high_stakes"
    assert review.review_id == stable_id("review", "c2")
    assert review.incumbent_fact_ids == (old.fact_id,)
    assert review.candidate == new
    assert review.created_at == NOW


def test_high_stakes_incumbent_with_higher_confidence_goes_to_review() -> None:
    old = stored(
        candidate("c1", "date_of_birth", "1990-04-02", "Born 1990-04-02.", confidence=0.95)
    )
    new = candidate("c2", "date_of_birth", "1991-04-02", "Born 1991-04-02.", confidence=0.6)
    assert decide(new, [old]).decision is Decision.REVIEW


def test_high_stakes_uncorroborated_incumbent_is_superseded() -> None:
    old = stored(candidate("c1", "date_of_birth", "1990-04-02", "Born 1990-04-02.", confidence=0.5))
    new = candidate("c2", "date_of_birth", "1991-04-02", "Born 1991-04-02.", confidence=0.9)
    assert decide(new, [old]).decision is Decision.SUPERSEDE


def test_high_stakes_many_valued_attribute_still_adds() -> None:
    old = stored(
        candidate("c1", "allergy", "peanuts", "Allergic to peanuts."), verification_count=5
    )
    new = candidate("c2", "allergy", "shellfish", "Allergic to shellfish.")
    assert decide(new, [old]).decision is Decision.ADD


def test_several_current_incumbents_are_all_superseded_consistently() -> None:
    a = stored(candidate("a", "employer", "Acme", "User works at Acme."))
    b = stored(
        candidate(
            "b",
            "employer",
            "Initech",
            "User works at Initech.",
            observed_at=JAN + timedelta(days=1),
        )
    )
    new = candidate(
        "c", "employer", "Stripe", "User works at Stripe.", observed_at=JAN + timedelta(days=9)
    )
    result = decide(new, [b, a])
    assert result.decision is Decision.SUPERSEDE
    fresh, *retired = result.facts
    assert fresh.supersedes == b.fact_id  # the newest incumbent
    assert {f.fact_id for f in retired} == {a.fact_id, b.fact_id}
    assert all(f.status == "superseded" for f in retired)
    assert all(f.valid_to == fresh.valid_from for f in retired)
    assert all(f.superseded_by == fresh.fact_id for f in retired)
    assert {e.old_fact_id for e in result.supersessions} == {a.fact_id, b.fact_id}
    assert len({e.event_id for e in result.supersessions}) == 2


def test_non_current_incumbents_are_ignored() -> None:
    gone = stored(
        candidate("c1", "employer", "Datadog", "User works at Datadog."), status="superseded"
    )
    result = decide(candidate("c2", "employer", "Stripe", "User works at Stripe."), [gone])
    assert result.decision is Decision.ADD
    assert [f.fact_id for f in result.facts] == [fact_id_for(result.candidate)]


def test_replaying_a_candidate_against_the_same_state_is_identical() -> None:
    old = stored(candidate("c1", "employer", "Datadog", "User works at Datadog."))
    new = candidate(
        "c2", "employer", "Stripe", "User works at Stripe.", observed_at=JAN + timedelta(days=2)
    )
    assert decide(new, [old]) == decide(new, [old])


def test_a_candidate_whose_fact_is_already_current_writes_nothing() -> None:
    cand = candidate("c1", "employer", "Datadog", "User works at Datadog.")
    result = decide(cand, [stored(cand)])
    assert result.decision is Decision.NOOP
    assert result.facts == () and result.vector_rows == ()


def test_an_incumbent_of_another_subject_is_a_bug() -> None:
    other = stored(candidate("c1", "employer", "Acme", "Works at Acme.", subject="user-7"))
    with pytest.raises(SubjectMismatch):
        decide(candidate("c2", "employer", "Stripe", "Works at Stripe."), [other])


def test_unknown_slot_is_single_valued_compares_text_and_inherits_the_attribute() -> None:
    old = stored(candidate("c1", "pet", None, "User has a cat named Miso."))
    same = candidate("c2", None, None, "user has a cat named miso")
    assert decide(same, [old], spec=None, decided_by="llm").decision is Decision.NOOP
    other = candidate(
        "c3", None, None, "User's cat is now called Tofu.", observed_at=JAN + timedelta(days=1)
    )
    result = decide(other, [old], spec=None, decided_by="llm")
    assert result.decision is Decision.SUPERSEDE
    assert result.decided_by == "llm" and result.reason.startswith("llm:")
    assert result.facts[0].attribute == "pet"  # it took the matched slot
    assert result.supersessions[0].decided_by == "llm"


def test_resolve_does_not_touch_its_inputs() -> None:
    old = stored(candidate("c1", "employer", "Datadog", "User works at Datadog."))
    snapshot = old.model_dump()
    decide(
        candidate(
            "c2", "employer", "Stripe", "Works at Stripe.", observed_at=JAN + timedelta(days=1)
        ),
        [old],
    )
    assert old.model_dump() == snapshot
