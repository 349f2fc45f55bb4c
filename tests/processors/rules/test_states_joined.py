"""States joined in one clause, adverbs before the verb, and Spanish and Portuguese bios.

Probed blind: "I'm vegan and allergic to X" is two facts; "as of monday I'm X" and "I now
go by X" still state X; "we use mongodb instead of postgres" names the one in use. Their
look-alikes: the same joined states said of someone else.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()
AT = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


def facts(text: str) -> set[tuple[str | None, object]]:
    return {(c.attribute, c.value) for c in read_turn(text, SCHEMA, at=AT) if c.attribute}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "im a vegan and allergic to shellfish fyi",
            {("diet", "vegan"), ("allergies", "shellfish")},
        ),
        ("I'm a nurse and based in leeds", {("job_title", "nurse"), ("home_city", "Leeds")}),
        ("as of last monday i'm vegetarian", {("diet", "vegetarian")}),
        ("i'm pescatarian as of monday", {("diet", "pescatarian")}),
        ("i now go by Alex btw", {("preferred_name", "Alex")}),
        ("we now use mongodb instead of postgres", {("database", "MongoDB")}),
        (
            "vivo en madrid y trabajo en telefónica",
            {("home_city", "Madrid"), ("employer", "Telefónica")},
        ),
        ("sou brasileiro, moro em porto", {("nationality", "Brazilian"), ("home_city", "Porto")}),
        ("soy mexicana", {("nationality", "Mexican")}),
        (
            "trabajo en remoto y hablo inglés y español",
            {("work_arrangement", "remote"), ("languages", "English"), ("languages", "Spanish")},
        ),
        ("vegetarian 🌱", {("diet", "vegetarian")}),
        (
            "I'm from Lagos originally but I've lived in Toronto for 6 years",
            {("hometown", "Lagos"), ("home_city", "Toronto")},
        ),
        ("i've lived in berlin since 2019", {("home_city", "Berlin")}),
        (
            "we're on postgres and i mostly write python",
            {("database", "PostgreSQL"), ("programming_languages", "Python")},
        ),
        ("30, nurse, leeds, 2 cats", {("job_title", "nurse")}),
        (
            "hey! 27, product designer, based in glasgow. vegetarian 🌱",
            {("job_title", "product designer"), ("home_city", "Glasgow"), ("diet", "vegetarian")},
        ),
        ("pls change my payment method to paypal", {("payment_method", "paypal")}),
        ("please switch my payment to invoice", {("payment_method", "invoice")}),
        (
            "I'm single and live alone in Nairobi",
            {("relationship_status", "single"), ("home_city", "Nairobi")},
        ),
        (
            "originally from Kraków, now living in London and working at Deloitte",
            {("hometown", "Kraków"), ("home_city", "London"), ("employer", "Deloitte")},
        ),
        (
            "I speak Hindi natively and I'm learning Japanese",
            {("native_language", "Hindi"), ("languages", "Hindi")},
        ),
    ],
)
def test_joined_and_adverbed_statements_are_read(
    text: str, expected: set[tuple[str, object]]
) -> None:
    assert facts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "my sister is vegan and allergic to nuts",
        "my sister is vegan, allergic to nuts",
        "my mum had surgery, on painkillers now",
        "he's married and based in leeds",
        "salt and vinegar is my fave",
        "sou de recife",
        # A past home, someone else's, a list of places: no home now.
        "I've lived in Rome, Paris and Oslo",
        "my sister has lived in Rome for years",
        "I'm on redis duty this week",
        # A bio line of someone else's, or a list of jobs to choose from.
        "my brother, 30, nurse, leeds",
        "nurse, doctor, teacher, which pays best",
        "It's a flavorful and healthy grilled chicken and veggie stir-fry",
        "my sister, now living in London and working at Deloitte",
        # A request about someone else's account is not the speaker's method.
        "please switch my payment to invoice for the team account",
        "my sister speaks Hindi natively",
        "Working on cars helps me chill and clear my head",
    ],
)
def test_someone_elses_joined_states_are_not_the_speakers(text: str) -> None:
    assert not {a for a, _ in facts(text)} - {"hometown"}


def test_a_change_asked_for_carries_the_change_marker() -> None:
    found = read_turn("pls change my payment method to paypal", SCHEMA, at=AT)
    assert [(c.value, c.stated_change) for c in found] == [("paypal", True)]
