"""The eval's arithmetic: mechanism rows, false supersessions, the article's per-day figures."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slotwise.streams.evaluation.data import Pair
from slotwise.streams.evaluation.deletion import DeletionCase, DeletionOutcome, score_deletions
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
    assert missed == pytest.approx(0.38 * conflicts)  # the article's ~18,000
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


def test_deletion_scores_honour_the_scope_and_count_what_was_erased_beyond_it() -> None:
    cases = [
        DeletionCase("r1", "forget my email", AT, "attributes", frozenset({"email"})),
        DeletionCase("r2", "forget my email and phone", AT, "attributes", frozenset({"email"})),
        DeletionCase("r3", "forget what i said", AT, "ask"),
        DeletionCase("r4", "forget me", AT, "subject"),
        DeletionCase("n1", "i forgot my password", AT, None),
        DeletionCase("n2", "delete the spam folder", AT, None),
    ]
    outcomes = [
        DeletionOutcome("r1", ("email",), False),
        DeletionOutcome("r2", ("email", None), False),  # everything: wider than asked
        DeletionOutcome("r3", (), True),
        DeletionOutcome("r4", (), True),  # asked, but "forget me" was readable: a miss
        DeletionOutcome("n1", ("email",), False),
        DeletionOutcome("n2", (), True),
    ]
    scored = score_deletions(cases, outcomes)
    assert (scored.requests, scored.honoured, scored.to_review) == (4, 2, 2)
    assert (scored.wider, scored.lookalike_erasures, scored.lookalike_reviews) == (1, 1, 1)
    assert scored.recall == 0.5 and len(scored.misses) == 3


def test_caught_counts_supersessions_and_reviews_and_noise_the_reviews_of_non_changes() -> None:
    pairs = [
        pair("a", "SUPERSEDE", "Northwind"),
        pair("b", "SUPERSEDE", "Northwind"),
        pair("c", "REVIEW", None),
        pair("d", "NOOP", "Acme"),
        pair("e", "SUPERSEDE", "Northwind"),
    ]
    outcomes = [
        outcome("a", "SUPERSEDE", "Northwind", supersessions=1),
        outcome("b", "REVIEW", "Northwind"),
        outcome("c", "REVIEW", None),
        outcome("d", "REVIEW", "Acme"),
        outcome("e", "none", None),
    ]
    review = score(pairs, outcomes).review
    assert review is not None
    assert (review.changes, review.caught, review.review_items, review.noise) == (4, 3, 3, 1)
    assert review.caught_share == 0.75 and review.noise_share == pytest.approx(1 / 3)
