"""The half-life fit: censoring matters, intervals cover, the proposal never decays identity."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from slotwise.processors.calibration import (
    CalibrationError,
    Lifetimes,
    chi2_quantile,
    current_half_lives,
    fit,
    lifetimes_of,
    propose_vocabulary,
)
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import Fact

NOW = datetime(2027, 1, 1, tzinfo=UTC)
SCHEMA = AttributeSchema.load()


def synthetic(half_life_days: float, *, chains: int, window_days: float, seed: int) -> Lifetimes:
    """Renewal chains started at random in the window: closed lifetimes and censored ages."""
    rng = random.Random(seed)
    rate = math.log(2) / half_life_days
    found = Lifetimes()
    for _ in range(chains):
        start = rng.uniform(0, window_days)
        while True:
            lived = rng.expovariate(rate)
            if start + lived >= window_days:
                found = found + Lifetimes(open=1, open_days=window_days - start)
                break
            found = found + Lifetimes(closed=1, closed_days=lived)
            start += lived
    return found


@pytest.mark.parametrize(("truth", "seed"), [(30.0, 1), (200.0, 2), (730.0, 3), (1500.0, 4)])
def test_the_censored_fit_recovers_known_half_lives_within_its_interval(
    truth: float, seed: int
) -> None:
    data = synthetic(truth, chains=400, window_days=730, seed=seed)
    result = fit("c", data)
    assert result.half_life_days is not None
    assert result.contains(truth), (truth, result)
    assert result.half_life_days == pytest.approx(truth, rel=0.25)


def test_ignoring_censoring_is_biased_short() -> None:
    data = synthetic(730.0, chains=400, window_days=730, seed=9)
    naive = data.naive_mean_days
    assert naive is not None
    assert naive * math.log(2) < 0.6 * 730  # the closed ones are the short-lived ones
    assert fit("c", data).contains(730.0)


def test_the_interval_covers_about_as_often_as_it_says() -> None:
    hits = sum(
        fit("c", synthetic(100.0, chains=60, window_days=365, seed=s)).contains(100.0)
        for s in range(200)
    )
    assert 0.90 * 200 <= hits <= 0.99 * 200


def test_no_closed_lifetime_gives_an_open_ended_estimate() -> None:
    result = fit("identity", Lifetimes(open=50, open_days=5000.0))
    assert result.half_life_days is None and result.high_days is None
    assert result.low_days is not None and result.low_days > 0
    assert fit("none", Lifetimes()).low_days is None


def test_chi_square_quantiles() -> None:
    assert chi2_quantile(0.975, 2) == pytest.approx(7.37776, abs=1e-4)
    assert chi2_quantile(0.025, 200) == pytest.approx(162.728, abs=1e-3)
    assert chi2_quantile(0.5, 1) == pytest.approx(0.454936, abs=1e-5)
    with pytest.raises(CalibrationError):
        chi2_quantile(1.5, 3)
    with pytest.raises(CalibrationError):
        fit("c", Lifetimes(closed=1, closed_days=1.0), confidence=1.0)


def _fact(
    fact_id: str, attribute: str, status: str, start_days: float, end_days: float | None
) -> Fact:
    start = NOW - timedelta(days=start_days)
    return Fact.model_validate(
        {
            "schema": "fact/1",
            "fact_id": fact_id,
            "subject_id": "s",
            "attribute": attribute,
            "value": fact_id,
            "text": fact_id,
            "category": None,
            "status": status,
            "valid_from": start,
            "valid_to": None if end_days is None else NOW - timedelta(days=end_days),
            "observed_at": start,
            "recorded_at": start,
            "source": "chat",
            "confidence": 0.9,
            "importance": 0.5,
            "candidate_id": fact_id,
        }
    )


def test_lifetimes_of_the_store_count_single_valued_slots_by_vocabulary_category() -> None:
    facts = [
        _fact("a", "employer", "superseded", 100, 40),  # lived 60 days
        _fact("b", "employer", "current", 40, None),  # 40 days so far
        _fact("c", "job_title", "archived", 10, None),  # archived is still true: censored
        _fact("d", "languages", "current", 500, None),  # many-valued: never ends, not counted
        _fact("e", "employer", "history", 300, 200),  # out-of-order history: not a lifetime
    ]
    found = lifetimes_of(facts, SCHEMA, as_of=NOW)
    assert set(found) == {"work"}
    assert found["work"] == Lifetimes(closed=1, closed_days=60.0, open=2, open_days=50.0)
    censored_only = lifetimes_of(facts, SCHEMA, as_of=NOW, closed=False)
    assert censored_only["work"] == Lifetimes(open=2, open_days=50.0)


def test_the_proposal_is_a_new_version_and_keeps_identity_null() -> None:
    document = {
        "version": "1",
        "attributes": {
            "name": {"cardinality": "one", "category": "identity", "half_life_days": None},
            "employer": {"cardinality": "one", "category": "work", "half_life_days": 730},
            "plan": {"cardinality": "one", "category": "plan", "half_life_days": 365},
        },
    }
    fits = {
        "work": fit("work", Lifetimes(closed=80, closed_days=30_000.0, open=20, open_days=4000.0)),
        "plan": fit("plan", Lifetimes(closed=3, closed_days=100.0)),
        "identity": fit("identity", Lifetimes(closed=40, closed_days=100.0)),
    }
    proposed = propose_vocabulary(document, fits, min_events=30)
    assert proposed["version"] == "2"
    assert document["attributes"]["employer"]["half_life_days"] == 730  # not mutated
    attributes = proposed["attributes"]
    assert attributes["employer"]["half_life_days"] == round(math.log(2) * 34_000 / 80)
    assert attributes["plan"]["half_life_days"] == 365  # 3 events: too few to change
    assert attributes["name"]["half_life_days"] is None
    assert proposed["calibration"]["categories"]["work"]["applied_to"] == ["employer"]
    AttributeSchema.parse(proposed)  # still a valid vocabulary


def test_current_half_lives_come_from_single_valued_attributes() -> None:
    current = current_half_lives(SCHEMA)
    assert current["identity"] is None
    assert current["event"] == 30
    assert current["work"] == 730
