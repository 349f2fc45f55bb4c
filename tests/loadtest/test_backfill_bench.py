"""Pure parts of the backfill benchmark: its seeded rows and the bracket's arithmetic."""

from __future__ import annotations

import math

import pytest

from slotwise.loadtest.backfill import Bracket, seed_rows
from slotwise.loadtest.measure import Latencies


def _p99(seconds: float) -> Latencies:
    return Latencies(count=150, missing=0, p50=seconds / 2, p95=seconds, p99=seconds, max=seconds)


def test_seed_rows_are_distinct_stable_and_spread_over_subjects() -> None:
    rows = list(seed_rows(3000, subjects=200))
    assert len({r.fact_id for r in rows}) == len({r.text for r in rows}) == 3000
    assert len({r.subject_id for r in rows}) == 200
    assert rows == list(seed_rows(3000, subjects=200))
    assert [r.fact_id for r in rows] == sorted(r.fact_id for r in rows)  # the backfill's order


def test_the_bracket_compares_against_the_worse_of_the_windows_either_side() -> None:
    bracket = Bracket(before=_p99(1.0), during=_p99(1.5), after=_p99(1.2))
    assert bracket.p99_ratio == pytest.approx(1.25)
    assert bracket.p99_added_ms == pytest.approx(300.0)
    assert Bracket(_p99(1.0), _p99(0.9), _p99(1.0)).p99_added_ms == pytest.approx(-100.0)
    assert math.isnan(Bracket(_p99(0.0), _p99(1.0), _p99(0.0)).p99_ratio)
