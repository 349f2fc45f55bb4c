"""Two look-alikes of a change: a rumour about the speaker's future ("they keep hinting
we'll be back in the office"), and being somewhere that is no home ("we're back in the
office now", "back in march"). Neither may become a supersession or a question about a
home; the moves beside them still ask."""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn, slots_asked

SCHEMA = AttributeSchema.load()


@pytest.mark.parametrize(
    "text",
    [
        "they keep hinting we'll all be back in the office next year",
        "rumour is we're all going back to the office in march",
        "supposedly i'm getting promoted to team lead in the spring",
        "word is the whole team moves to berlin next year",
        "my manager hinted i'd be fully remote from january",
        "allegedly we're switching to the enterprise plan",
    ],
)
def test_hearsay_about_the_speaker_states_nothing(text: str) -> None:
    assert [(c.attribute, c.value) for c in read_turn(text, SCHEMA, ask=True)] == []


@pytest.mark.parametrize(
    "text",
    [
        "we're back in the office 3 days now",
        "we're in the office most days now",
        "back in the gym since monday, everything hurts",
        "back in march i had covid, all fine now",
        "finally back in shape after the holidays",
        "we're in the car now, call you later",
    ],
)
def test_being_somewhere_that_is_no_home_asks_about_no_home(text: str) -> None:
    asked = slots_asked(text, SCHEMA)
    assert "home_city" not in asked and "timezone" not in asked


@pytest.mark.parametrize(
    "text",
    [
        "back in my hometown since june, it's weird",
        "we're in the countryside now, so quiet",
        "back in leeds for good, london was too much",
    ],
)
def test_a_move_back_still_reaches_the_home(text: str) -> None:
    assert "home_city" in {c.attribute for c in read_turn(text, SCHEMA, ask=True)}


@pytest.mark.parametrize(
    "text",
    [
        "we're in the car now, call you later",
        "we're in the pub now lol",
        "im in the gym now",
        "we're at the hub now, the wifi is awful",
        "in the airport now, flight delayed again",
    ],
)
def test_a_place_said_with_the_is_no_town_of_that_other_name(text: str) -> None:
    """Car, Pub, Hub and Airport are towns' names somewhere; "the car" is not one."""
    values = {c.attribute: c.value for c in read_turn(text, SCHEMA, ask=True)}
    assert values.get("home_city") is None and values.get("current_location") is None
