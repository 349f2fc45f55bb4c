"""Ongoing states: "I've been at Monzo for 3 years" is the present, though it began before
the incumbent; history and importer candidates keep the out-of-order rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from slotwise.processors.model import Decision
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn
from tests.processors.test_resolve import JAN, candidate, decide, stored

SCHEMA = AttributeSchema.load()
SAID = datetime(2026, 3, 20, 18, 0, tzinfo=UTC)


def flags(text: str) -> dict[str | None, bool]:
    return {c.attribute: c.ongoing for c in read_turn(text, SCHEMA, at=SAID)}


@pytest.mark.parametrize(
    ("text", "attribute"),
    [
        ("i've been at monzo for 3 years", "employer"),
        ("I moved to Denver about three weeks ago.", "home_city"),
        ("I've been fully remote since January", "work_arrangement"),
    ],
)
def test_a_lasting_present_state_is_marked_ongoing(text: str, attribute: str) -> None:
    assert flags(text).get(attribute) is True


@pytest.mark.parametrize(
    "text",
    ["I work at Monzo", "I lived in Osaka until last year", "in 2019 I was at IBM"],
)
def test_a_present_or_bygone_statement_is_not(text: str) -> None:
    assert not any(flags(text).values())


def test_an_ongoing_state_said_later_supersedes_despite_its_earlier_start() -> None:
    old = stored(candidate("c1", "employer", "Revolut", "User works at Revolut."))
    three_years = JAN - timedelta(days=3 * 365)
    new = candidate(
        "c2",
        "employer",
        "Monzo",
        "User has been at Monzo for 3 years.",
        observed_at=JAN + timedelta(days=60),
        valid_from=three_years,
    ).model_copy(update={"ongoing": True})
    result = decide(new, [old])
    assert result.decision is Decision.SUPERSEDE
    retired = next(f for f in result.facts if f.fact_id == old.fact_id)
    # never closed before it began
    assert retired.valid_to == old.valid_from


def test_without_the_flag_the_out_of_order_rule_stands() -> None:
    old = stored(candidate("c1", "employer", "Revolut", "User works at Revolut."))
    older = candidate(
        "c2",
        "employer",
        "Monzo",
        "User was at Monzo.",
        observed_at=JAN + timedelta(days=60),
        valid_from=JAN - timedelta(days=900),
    )
    result = decide(older, [old])
    assert result.decision is Decision.ADD
    assert result.facts[0].status == "history"


def test_an_ongoing_state_observed_before_the_incumbent_is_still_history() -> None:
    old = stored(candidate("c1", "employer", "Revolut", "User works at Revolut.", observed_at=JAN))
    late = candidate(
        "c2",
        "employer",
        "Monzo",
        "User has been at Monzo for 3 years.",
        observed_at=JAN - timedelta(days=1),
        valid_from=JAN - timedelta(days=1000),
    ).model_copy(update={"ongoing": True})
    result = decide(late, [old])
    assert result.decision is Decision.ADD
    assert result.facts[0].status == "history"
