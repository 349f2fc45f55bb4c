"""The eval's arithmetic: mechanism rows, false supersessions, the seed's per-day figures."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slotwise.streams.evaluation.data import Pair
from slotwise.streams.evaluation.offline import PairOutcome
from slotwise.streams.evaluation.scoring import (
    CONFLICT_RATE,
    WRITES_PER_DAY,
    correct,
    false_supersession,
    implied,
    score,
)

AT = datetime(2026, 1, 1, tzinfo=UTC)


def pair(pid: str, decision: str, value: str | None, *, same_slot: bool = True) -> Pair:
    return Pair.model_validate(
        {
            "id": pid,
            "kind": "direct_change",
            "incumbent": {
                "text": "User works at Acme.",
                "attribute": "employer",
                "value": "Acme",
                "observed_at": AT,
                "source": "chat",
                "verification_count": 1,
            },
            "turn": {"text": "x", "observed_at": AT},
            "same_slot": same_slot,
            "decision": decision,
            "expected": None if value is None else {"attribute": "employer", "value": value},
        }
    )


def outcome(
    pid: str,
    decision: str,
    value: str | None,
    *,
    cosine: float = 0.5,
    exact: bool = True,
    supersessions: int = 0,
) -> PairOutcome:
    return PairOutcome(
        pid,
        decision,
        value,
        "employer" if value else None,
        "exact",
        "why",
        (),
        (),
        exact,
        cosine,
        None,
        supersessions > 0,
        supersessions,
    )


def test_the_seed_arithmetic() -> None:
    missed, false = implied(0.88, 0.62)
    conflicts = WRITES_PER_DAY * CONFLICT_RATE
    assert missed == pytest.approx(0.38 * conflicts)  # the seed's ~18,000
    assert false == pytest.approx(0.62 * conflicts * 0.12 / 0.88)


def test_a_supersession_is_right_only_with_the_expected_value() -> None:
    good, wrong_value, unwanted = (
        pair("a", "SUPERSEDE", "Northwind"),
        pair("b", "SUPERSEDE", "Northwind"),
        pair("c", "NOOP", "Acme"),
    )
    assert correct(good, outcome("a", "SUPERSEDE", "northwind", supersessions=1))
    assert false_supersession(wrong_value, outcome("b", "SUPERSEDE", "Globex", supersessions=1))
    assert false_supersession(unwanted, outcome("c", "SUPERSEDE", "Acme", supersessions=1))
    assert not false_supersession(good, outcome("a", "SUPERSEDE", "Northwind", supersessions=1))


def test_rows_and_counts() -> None:
    pairs = [
        pair("a", "SUPERSEDE", "N"),
        pair("b", "none", None, same_slot=False),
        pair("c", "SUPERSEDE", "M"),
    ]
    outcomes = [
        outcome("a", "SUPERSEDE", "N", cosine=0.9, supersessions=1),
        outcome("b", "none", None, cosine=0.85, exact=False),
        outcome("c", "none", None, cosine=0.2, exact=False),
    ]
    scores = score(pairs, outcomes)
    rows = {r.mechanism: r for r in scores.rows}
    exact = rows["exact path (extraction, then key equality)"]
    assert (exact.precision, exact.recall) == (1.0, 0.5)
    floor = rows["vector floor >= 0.80"]
    assert (floor.hits, floor.flagged, floor.positives) == (1, 2, 2)
    assert rows["model re-ranker (top 5)"].note.startswith("not run")
    pipeline = rows["pipeline: supersessions written"]
    assert (pipeline.precision, pipeline.recall) == (1.0, 0.5)
    assert scores.correct == 2 and scores.false_supersessions == ()
    assert [d.pair_id for d in scores.disagreements] == ["c"]
