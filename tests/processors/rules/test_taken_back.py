"""A value taken back in the same message ("moved to bristol, no wait, bath") is no
statement: what comes before the take-back is never stored, the correction after it is
read or asked about. Written before the reader ran on them."""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()


@pytest.mark.parametrize(
    ("text", "withdrawn"),
    [
        ("moved to bristol, no wait, bath", "Bristol"),
        ("I moved to Bristol, no wait, Bath", "Bristol"),
        ("we have 3 cats, scratch that, 4", "3 cats"),
        ("i work at deloitte, sorry i meant kpmg", "Deloitte"),
        ("i work at deloitte, sorry, i mean kpmg", "Deloitte"),
        ("my number is 0123 456 789, wait no, 0123 456 798", "0123456789"),
    ],
)
def test_a_value_taken_back_is_never_stored(text: str, withdrawn: str) -> None:
    assert withdrawn not in {c.value for c in read_turn(text, SCHEMA, ask=True)}


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("I live in Leeds. I mean, it's fine", "home_city", "Leeds"),
        ("we moved to leeds - i meant to tell you last week", "home_city", "Leeds"),
        ("i'm vegan, i mean mostly", "diet", "vegan"),
    ],
)
def test_i_mean_said_in_passing_takes_nothing_back(text: str, slot: str, value: str) -> None:
    assert (slot, value) in {(c.attribute, c.value) for c in read_turn(text, SCHEMA)}
