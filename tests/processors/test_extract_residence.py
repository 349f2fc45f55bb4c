"""The offline extractor on a home told without "live" ("back in Dublin", "settled in
Glasgow", "Denver-based now"), on imperatives that open with a negation, and on a spouse
named in a sentence that ends the marriage."""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn
from slotwise.topics.records import CandidateFact

SCHEMA = AttributeSchema.load()


def read(text: str) -> list[CandidateFact]:
    return read_turn(text, SCHEMA, ask=True)


def stated(text: str, attribute: str) -> set[object]:
    return {c.value for c in read(text) if c.attribute == attribute and c.question is None}


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("back in Dublin after two years in Berlin", "Dublin"),
        ("settled in Glasgow now", "Glasgow"),
        ("home is Lisbon these days", "Lisbon"),
        ("we're Denver-based now", "Denver"),
    ],
)
def test_reads_a_home_told_without_live(text: str, city: str) -> None:
    assert stated(text, "home_city") == {city}


@pytest.mark.parametrize(
    "text",
    [
        "back in Dublin for the weekend",
        "back in London till friday",
        "home is where the heart is",
        "settled in at the hotel",
        "my sister is back in Dublin",
        "I'm back in the office",
    ],
)
def test_a_stay_is_no_home(text: str) -> None:
    assert stated(text, "home_city") == set()


def test_an_imperative_opening_on_a_negation_is_read_and_a_question_is_not() -> None:
    asked = {c.attribute for c in read("don't use the 415 number anymore, it's +1 628 555 0147")}
    assert "phone" in asked
    assert read("don't you think the 415 number is nicer") == []


def test_any_pronouns_are_fine_is_a_statement() -> None:
    assert stated("honestly any pronouns are fine", "pronouns") == {"any"}
    assert read("any tips for pronouns at work") == []


def test_a_spouse_in_a_sentence_that_ends_the_marriage_is_no_marriage() -> None:
    assert stated("my wife and I split up in the spring", "relationship_status") == set()
    assert stated("my wife and I went hiking", "relationship_status") == {"married"}
