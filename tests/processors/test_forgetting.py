"""The forgetting score's shape and a pass's selection: pure, so every case is exact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from slotwise.processors.forgetting import (
    Access,
    ForgetPolicy,
    HalfLives,
    PolicyError,
    decay,
    score,
    select_archived,
)
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import Fact

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = AttributeSchema.load()
HALF_LIVES = HalfLives.of(SCHEMA, overrides={"travel": 90.0})
WINDOW = timedelta(days=30)


def fact(fact_id: str, attribute: str | None = "employer", **fields: object) -> Fact:
    base: dict[str, object] = {
        "schema": "fact/1",
        "fact_id": fact_id,
        "subject_id": "s",
        "attribute": attribute,
        "value": fact_id,
        "text": f"User fact {fact_id}.",
        "category": None,
        "status": "current",
        "valid_from": T0,
        "observed_at": T0,
        "recorded_at": T0,
        "source": "chat",
        "confidence": 0.9,
        "importance": 0.5,
        "candidate_id": f"c-{fact_id}",
    }
    return Fact.model_validate({**base, **fields})


def scored(
    f: Fact, days: float, *, last_access: datetime | None = None, delta: float = 0.5
) -> float:
    return score(
        f,
        as_of=T0 + timedelta(days=days),
        last_access=last_access,
        half_life_days=HALF_LIVES.days(f),
        delta=delta,
        verified_window=WINDOW,
    )


def test_identity_never_decays() -> None:
    name = fact("n", "name")
    assert HALF_LIVES.days(name) is None
    assert scored(name, 0) == scored(name, 36_500) == 0.5


def test_events_decay_fast_and_work_slowly() -> None:
    event, job = fact("e", "current_location"), fact("j", "employer")
    assert scored(event, 30) == pytest.approx(0.25)  # one 30-day half-life
    assert scored(event, 90) == pytest.approx(0.0625)
    assert scored(job, 90) == pytest.approx(0.5 * 0.5 ** (90 / 730))
    assert scored(job, 90) > 0.4 > scored(event, 90) * 4


def test_decay_is_one_at_zero_and_half_after_one_half_life() -> None:
    assert decay(timedelta(0), 10.0) == 1.0
    assert decay(timedelta(days=10), 10.0) == pytest.approx(0.5)
    # A read after the evaluation time counts as a read at it: never more than 1.
    assert decay(timedelta(days=-3), 10.0) == 1.0


def test_the_clock_starts_at_the_last_access_or_at_recording() -> None:
    event = fact("e", "current_location")
    assert scored(event, 60) == pytest.approx(0.125)
    read = T0 + timedelta(days=30)
    assert scored(event, 60, last_access=read) == pytest.approx(0.25)


def test_the_verification_boost_saturates() -> None:
    once = fact("a", "employer", last_verified=T0 + timedelta(days=80), verification_count=1)
    often = fact("b", "employer", last_verified=T0 + timedelta(days=80), verification_count=40)
    stale = fact("c", "employer", last_verified=T0, verification_count=40)
    plain = fact("d", "employer")
    assert scored(once, 90) == pytest.approx(scored(plain, 90) * 1.5)
    assert scored(often, 90) == scored(once, 90)  # counted once however often
    assert scored(stale, 90) == scored(plain, 90)  # outside the window: no boost


def test_importance_scales_the_score() -> None:
    low, high = fact("l", importance=0.2), fact("h", importance=0.8)
    assert scored(high, 100) == pytest.approx(4 * scored(low, 100))


def test_free_text_takes_its_category_then_the_default() -> None:
    trip = fact("t", None, category="travel")
    home = fact("h", None, category="home")
    odd = fact("o", None, category="unheard-of")
    assert HALF_LIVES.days(trip) == 90.0
    assert HALF_LIVES.days(home) == 1095.0
    assert HALF_LIVES.days(odd) == HALF_LIVES.default == 365.0


def test_a_pass_archives_below_threshold_and_past_the_budget() -> None:
    facts = [
        fact("name", "name", importance=0.9),
        fact("trip", "current_location", importance=0.5),
        fact("job", "employer", importance=0.6),
        fact("plan", "plan", importance=0.3),
        fact("old", "employer", status="superseded"),
    ]
    as_of = T0 + timedelta(days=120)
    chosen = select_archived(
        facts, {}, as_of=as_of, policy=ForgetPolicy(threshold=0.1), half_lives=HALF_LIVES
    )
    assert [s.fact.fact_id for s in chosen.archived] == ["trip"]
    assert chosen.below_threshold == 1 and chosen.over_budget == 0
    budgeted = select_archived(
        facts, {}, as_of=as_of, policy=ForgetPolicy(threshold=0.1, budget=2), half_lives=HALF_LIVES
    )
    # Highest scores kept: name (0.9), job; plan goes for the budget, trip below threshold.
    assert [s.fact.fact_id for s in budgeted.kept] == ["name", "job"]
    assert {s.fact.fact_id: s.reason for s in budgeted.archived} == {
        "plan": "over_budget",
        "trip": "below_threshold",
    }


def test_a_recent_read_keeps_a_fact() -> None:
    trip = fact("trip", "current_location")
    as_of = T0 + timedelta(days=120)
    read = {"trip": Access(3, as_of - timedelta(days=2))}
    kept = select_archived(
        [trip], read, as_of=as_of, policy=ForgetPolicy(threshold=0.1), half_lives=HALF_LIVES
    )
    assert kept.archived == () and len(kept.kept) == 1


def test_facts_recorded_after_the_evaluation_time_are_outside_the_pass() -> None:
    as_of = T0 + timedelta(days=120)
    old = [fact(f"f{i}", "employer", importance=0.1 * (i + 1)) for i in range(5)]
    later = [fact(f"n{i}", "employer", recorded_at=as_of + timedelta(seconds=1)) for i in range(9)]
    policy = ForgetPolicy(threshold=0.1, budget=3)
    alone = select_archived(old, {}, as_of=as_of, policy=policy, half_lives=HALF_LIVES)
    raced = select_archived([*old, *later], {}, as_of=as_of, policy=policy, half_lives=HALF_LIVES)
    assert raced.archived == alone.archived
    assert raced.skipped == 9 and alone.skipped == 0


def test_ties_are_broken_by_fact_id() -> None:
    twins = [fact(i, "employer") for i in ("b", "a", "c")]
    chosen = select_archived(
        twins,
        {},
        as_of=T0,
        policy=ForgetPolicy(threshold=0.0, budget=1),
        half_lives=HALF_LIVES,
    )
    assert [s.fact.fact_id for s in chosen.kept] == ["a"]


def test_params_round_trip_and_fill_from_the_default() -> None:
    policy = ForgetPolicy(threshold=0.2, budget=7, delta=0.25, verified_window=timedelta(days=3))
    assert ForgetPolicy.from_params(policy.params(), ForgetPolicy()) == policy
    assert ForgetPolicy.from_params({"threshold": 0.3}, policy).budget == 7
    with pytest.raises(PolicyError):
        ForgetPolicy.from_params({"threshold": "x"}, policy)
    with pytest.raises(PolicyError):
        ForgetPolicy(budget=-1)
