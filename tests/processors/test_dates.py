"""Relative dates resolved against the observation time (pure)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from slotwise.processors.dates import absolute_phrase, find_date, parse_calendar_date, resolve

LISBON_SUMMER = timezone(timedelta(hours=1))
# Saturday 14 March 2026, 10:00 at UTC+1.
SATURDAY = datetime(2026, 3, 14, 10, 0, tzinfo=LISBON_SUMMER)


def day(text: str, *, tense: str | None = None, at: datetime = SATURDAY) -> date | None:
    when = resolve(text, at, tense=tense)  # type: ignore[arg-type]
    return None if when is None else when.date()


def test_a_weekday_is_the_next_one_strictly_after_the_observation_at_midnight() -> None:
    when = resolve("I start at Stripe on Monday.", SATURDAY)
    assert when == datetime(2026, 3, 16, 0, 0, tzinfo=LISBON_SUMMER)
    assert when is not None and when.tzinfo is LISBON_SUMMER


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Monday", date(2026, 3, 16)),
        ("on Saturday", date(2026, 3, 21)),  # strictly after: not the same day
        ("this Friday", date(2026, 3, 20)),
        ("last Monday", date(2026, 3, 9)),
        ("last Saturday", date(2026, 3, 7)),
        ("next Tuesday", date(2026, 3, 17)),
        ("last Tues", date(2026, 3, 10)),
    ],
)
def test_weekdays(text: str, expected: date) -> None:
    assert day(text) == expected


def test_a_bare_weekday_in_the_past_tense_is_the_previous_one() -> None:
    assert day("I went hiking on Monday", tense="past") == date(2026, 3, 9)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("today", date(2026, 3, 14)),
        ("tonight", date(2026, 3, 14)),
        ("tomorrow", date(2026, 3, 15)),
        ("yesterday", date(2026, 3, 13)),
        ("last night", date(2026, 3, 13)),
        ("the day before yesterday", date(2026, 3, 12)),
        ("last week", date(2026, 3, 7)),
        ("next week", date(2026, 3, 21)),
        ("last weekend", date(2026, 3, 7)),
        ("this weekend", date(2026, 3, 14)),
        ("this week", date(2026, 3, 9)),
        ("this month", date(2026, 3, 1)),
        ("this year", date(2026, 1, 1)),
        ("next weekend", date(2026, 3, 21)),
        ("3 days ago", date(2026, 3, 11)),
        ("two weeks ago", date(2026, 2, 28)),
        ("last month", date(2026, 2, 1)),
        ("next month", date(2026, 4, 1)),
        ("a month ago", date(2026, 2, 1)),
        ("last year", date(2025, 1, 1)),
        ("next year", date(2027, 1, 1)),
        ("five years ago", date(2021, 1, 1)),
        ("since 2021", date(2021, 1, 1)),
        ("in 2021", date(2021, 1, 1)),
        ("back in March 2019", date(2019, 3, 1)),
        ("on 3 May 2020", date(2020, 5, 3)),
        ("on March 3rd, 2024", date(2024, 3, 3)),
        ("2025-12-24", date(2025, 12, 24)),
    ],
)
def test_relative_and_absolute_expressions(text: str, expected: date) -> None:
    assert day(text) == expected


def test_last_week_is_seven_days_before_at_midnight() -> None:
    assert resolve("last week", SATURDAY) == datetime(2026, 3, 7, tzinfo=LISBON_SUMMER)


def test_a_month_name_follows_the_tense() -> None:
    april = datetime(2026, 4, 2, 10, 0, tzinfo=LISBON_SUMMER)
    assert day("I visited Lisbon in March", tense="past", at=april) == date(2026, 3, 1)
    assert day("in March", tense="future", at=april) == date(2027, 3, 1)
    assert day("in June", tense="past", at=april) == date(2025, 6, 1)
    assert day("in June", tense="future", at=april) == date(2026, 6, 1)
    # At or before: said in March, "in March" is this March.
    assert day("in March", tense="past") == date(2026, 3, 1)


def test_last_and_next_month_names_are_strict() -> None:
    assert day("last March") == date(2025, 3, 1)
    assert day("next March") == date(2027, 3, 1)
    assert day("last February") == date(2026, 2, 1)


def test_a_day_of_a_month_without_a_year_follows_the_tense() -> None:
    assert day("on March 20", tense="past") == date(2025, 3, 20)
    assert day("on March 20", tense="future") == date(2026, 3, 20)


def test_lower_case_may_is_the_verb_not_the_month() -> None:
    assert resolve("I may move in", SATURDAY) is None
    assert day("in May", tense="past") == date(2025, 5, 1)


@pytest.mark.parametrize(
    "text", ["I live in Lisbon.", "I swim on Mondays.", "I sat in the sun", "in a week", ""]
)
def test_no_date_is_none(text: str) -> None:
    assert resolve(text, SATURDAY) is None


def test_the_earliest_mention_wins_and_its_span_is_reported() -> None:
    text = "I moved last year and started on Monday"
    mention = find_date(text, SATURDAY)
    assert mention is not None
    assert text[mention.start : mention.end] == "last year"
    assert mention.granularity == "year" and mention.deictic


def test_absolute_phrases_by_granularity() -> None:
    phrases = {
        text: absolute_phrase(mention)
        for text in ("yesterday", "last week", "last month", "last year", "in 2021")
        if (mention := find_date(text, SATURDAY)) is not None
    }
    assert phrases == {
        "yesterday": "on March 13, 2026",
        "last week": "in the week of March 7, 2026",
        "last month": "in February 2026",
        "last year": "in 2025",
        "in 2021": "in 2021",
    }
    explicit = find_date("in 2021", SATURDAY)
    assert explicit is not None and not explicit.deictic


def test_utc_observations_stay_utc() -> None:
    at = datetime(2026, 3, 14, 23, 30, tzinfo=UTC)
    assert resolve("tomorrow", at) == datetime(2026, 3, 15, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I was born on March 3, 1990", date(1990, 3, 3)),
        ("born 3 March 1990", date(1990, 3, 3)),
        ("1990-03-03", date(1990, 3, 3)),
        ("March 3", None),
        ("February 30, 2020", None),
        # numbers: read only when their order is not in doubt
        ("dob 14.02.1985", date(1985, 2, 14)),
        ("born 12/31/1990", date(1990, 12, 31)),
        ("born 05-05-1990", date(1990, 5, 5)),
        ("born 3/4/1992", None),
        ("31/02/1990", None),
        ("v1.2.2020", None),
    ],
)
def test_parse_calendar_date(text: str, expected: date | None) -> None:
    assert parse_calendar_date(text) == expected
