"""Phrasings added in the second pass: corrections that name the old value, dropped
"I've", and a stay "since thursday" that is a trip, not a home."""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn
from slotwise.topics.records import CandidateFact

SCHEMA = AttributeSchema.load()


def facts(text: str) -> list[CandidateFact]:
    return read_turn(text, SCHEMA)


def slots(text: str) -> set[tuple[str | None, object]]:
    return {(c.attribute, c.value) for c in facts(text)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("correction: mariadb, not mysql. i know, i know", {("database", "MariaDB")}),
        ("sorry i misspoke — vegetarian, not vegan, i still eat cheese", {("diet", "vegetarian")}),
        (
            "my native language is Afrikaans, not Dutch",
            {("native_language", "Afrikaans"), ("languages", "Afrikaans")},
        ),
        ("I live in Leeds, not London", {("home_city", "Leeds")}),
        # no corrected value, someone else's, or two denials: nothing
        ("I'm not british", set()),
        ("my sister is vegan, not vegetarian", set()),
        ("i'm not vegan, not vegetarian", set()),
        ("mariadb, not the weather", set()),
    ],
)
def test_a_correction_that_names_the_old_value(text: str, expected: set[object]) -> None:
    assert {s for s in slots(text) if s[0] is not None} == expected


def test_a_correction_states_a_change() -> None:
    [candidate] = facts("correction: mariadb, not mysql")
    assert candidate.stated_change


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("been hybrid since the office reopened in march", {("work_arrangement", "hybrid")}),
        ("been on sertraline since april", {("medications", "sertraline")}),
        ("been in leuven since 2020, love it here", {("home_city", "Leuven")}),
        # a stay since a weekday is a trip: never a home
        ("been in kumasi since thursday for the funeral", {("current_location", "Kumasi")}),
        ("I've been in Lisbon since Monday", {("current_location", "Lisbon")}),
    ],
)
def test_a_dropped_ive_been(text: str, expected: set[object]) -> None:
    assert slots(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Product designer at Figma, remote",
            {
                ("job_title", "product designer"),
                ("employer", "Figma"),
                ("work_arrangement", "remote"),
            },
        ),
        ("good at chess", set()),  # not a job title
        ("senior engineer at google said no", set()),  # someone else's words
    ],
)
def test_a_bio_line_is_the_speakers_job(text: str, expected: set[object]) -> None:
    assert slots(text) == expected


def test_an_email_typo_correction_is_a_stated_change() -> None:
    [candidate] = facts("oops typo, it's sam.lee@gmail.com")
    assert (candidate.attribute, candidate.value) == ("email", "sam.lee@gmail.com")
    assert candidate.stated_change


def test_a_denial_then_its_replacement() -> None:
    assert slots("my email isn't a@b.com, it's c@d.com") == {("email", "c@d.com")}
    assert slots("I don't live in Leeds, it's lovely though") == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my title is senior data scientist now 🎉", {("job_title", "senior data scientist")}),
        ("I'm the head of design now.", {("job_title", "head of design")}),
        ("my wife's title is senior engineer", set()),
        ("I'm the head of the household", set()),
        ("my title is a mouthful", set()),
    ],
)
def test_a_title_stated_as_such(text: str, expected: set[object]) -> None:
    assert slots(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("main db for me is snowflake now", {("database", "Snowflake")}),
        ("we're all tired now", set()),
    ],
)
def test_a_database_said_in_passing(text: str, expected: set[object]) -> None:
    assert {s for s in slots(text) if s[0] == "database"} == expected


def test_two_spellings_of_one_database_are_one_value() -> None:
    from slotwise.processors.aliases import same_database  # noqa: PLC0415

    assert same_database("Postgres", "PostgreSQL")
    assert same_database("mongo", "MongoDB")
    assert not same_database("MySQL", "PostgreSQL")
