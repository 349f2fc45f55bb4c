"""The offline extractor on bio fragments and run-ons: the place after a dropped "I'm",
a birth told without "I was", a plan named alone, and clauses a consequence or an
instruction ends."""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()


def slots(text: str) -> set[tuple[str | None, object]]:
    return {(c.attribute, c.value) for c in read_turn(text, SCHEMA) if c.attribute is not None}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("from lagos originally, based in london now", {("hometown", "Lagos")}),
        ("grew up in tromsø, long dark winters", {("hometown", "Tromsø")}),
        ("born in Ribadavia", {("birthplace", "Ribadavia")}),
        ("native spanish speaker", {("native_language", "Spanish")}),
        ("portuguese is my first language so sorry for typos", {("native_language", "Portuguese")}),
        ("team plan, 8 seats", {("plan", "Team")}),
        ("type 2 diabetes, on metformin", {("medications", "metformin")}),
        ("our db is postgres, dont suggest mongo pls", {("database", "PostgreSQL")}),
        (
            "im on levothyroxine every morning, so no breakfast before 7",
            {("medications", "levothyroxine")},
        ),
        (
            "been pescatarian for a year, and I'm allergic to shellfish ironically",
            {("allergies", "shellfish")},
        ),
        ("we've been on enterprise since last month", {("plan", "Enterprise")}),
        ("since october we've been on the team plan", {("plan", "Team")}),
    ],
)
def test_a_fragment_of_chat_is_read(text: str, expected: set[tuple[str, object]]) -> None:
    assert expected <= slots(text)


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("I'm from Datadog", "hometown"),  # a company, not a place
        ("i work for a uk company but from nairobi", "hometown"),  # where they work from
        ("business plan, due friday", "plan"),  # a document
        ("family plan, 4 lines", "plan"),  # a phone plan
        ("I live in Porto, Lisbon", "home_region"),  # two cities: no region read
    ],
)
def test_a_look_alike_fragment_is_not_read(text: str, absent: str) -> None:
    assert absent not in {attribute for attribute, _ in slots(text)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "i'm a nurse in auckland, night shifts",
            {("job_title", "nurse"), ("home_city", "Auckland")},
        ),
        (
            "senior backend dev at monzo",
            {("employer", "Monzo"), ("job_title", "senior backend developer")},
        ),
        ("been at google for 3 years now", {("employer", "Google")}),
        ("me and my partner moved to bristol last year", {("home_city", "Bristol")}),
        ("i live with my girlfriend in porto", {("home_city", "Porto")}),
        ("lactose intolerant so no cheese for me", {("medical_conditions", "lactose intolerance")}),
    ],
)
def test_a_bio_line_is_read(text: str, expected: set[tuple[str, object]]) -> None:
    assert expected <= slots(text)


def test_a_job_in_no_known_place_reads_no_home() -> None:
    assert slots("I'm a nurse in the ICU") == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("moved back home to cork", ("home_city", "Cork")),
    ],
)
def test_a_home_returned_to_is_read(text: str, expected: tuple[str, str]) -> None:
    assert expected in slots(text)


@pytest.mark.parametrize(
    "text",
    [
        "my partner and i just bought a house in leeds",  # bought, not yet moved
        "my sister bought a house in leeds",  # someone else's house
    ],
)
def test_a_house_bought_is_no_home_yet(text: str) -> None:
    assert slots(text) == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "i have a rescue greyhound named Pixel and a cat named Chairman Meow",
            {("pets", "dog named Pixel"), ("pets", "cat named Chairman Meow")},
        ),
        (
            "two cats (mango & kiwi), one husband",
            {("pets", "cat named Mango"), ("pets", "cat named Kiwi")},
        ),
        ("married, one kid, a cat called Pudding", {("pets", "cat named Pudding")}),
    ],
)
def test_a_named_pet_in_passing_is_read(text: str, expected: set[tuple[str, object]]) -> None:
    assert expected <= slots(text)


@pytest.mark.parametrize(
    "text",
    [
        "a friend just adopted a kitten called sushi",  # the friend's
        "my sister has a dog named Rex",  # the sister's
        "my neighbour's cat called Tom keeps visiting",  # the neighbour's
    ],
)
def test_someone_elses_pet_is_not_read(text: str) -> None:
    assert not {s for s in slots(text) if s[0] == "pets"}
