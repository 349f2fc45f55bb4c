"""Changes and corrections as chat types them, read by general rules, not by shapes.

Each family is probed with varied phrasings (lower case, typos, emoji, run-ons, a little
Spanish and Portuguese) and with the look-alikes its guards must refuse: someone else's
change, a plan, a question, a quotation, a trip, a word that only looks like a place.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slotwise.processors.rules.swaps import Swap, read_swap
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()
AT = datetime(2026, 3, 11, 14, 0, tzinfo=UTC)


def changed(text: str, attribute: str) -> set[tuple[object, bool]]:
    """The values of ``attribute`` read from the turn, each with its change marker."""
    return {
        (c.value, c.stated_change)
        for c in read_turn(text, SCHEMA, at=AT)
        if c.attribute == attribute
    }


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        # The right value beside the wrong one is a correction: it carries the marker.
        (
            "sorry typo, my email is jane.doe@proton.me not jane.doe@protn.me",
            "email",
            "jane.doe@proton.me",
        ),
        (
            "hey! typo earlier — my email is raj.p@icloud.com not raj.p@iclod.com",
            "email",
            "raj.p@icloud.com",
        ),
        ("*vegan not vegetarian", "diet", "vegan"),
        ("not vegetarian, vegan", "diet", "vegan"),
        ("correction: vegan, not vegetarian", "diet", "vegan"),
        ("correction: i work at stripe, not square", "employer", "Stripe"),
        ("oops, i live in bristol not bath", "home_city", "Bristol"),
        ("typo — it's sam.lee@gmail.com, not sam.le@gmail.com", "email", "sam.lee@gmail.com"),
        ("no, pescatarian not vegetarian 🐟", "diet", "pescatarian"),
    ],
)
def test_a_correction_reads_the_right_value_as_a_correction(
    text: str, attribute: str, value: str
) -> None:
    assert changed(text, attribute) == {(value, True)}


@pytest.mark.parametrize(
    ("text", "old", "new"),
    [
        ("not berlin, bremen. autocorrect lol", "berlin", "bremen"),
        ("wait i said lisbon but its porto actually", "lisbon", "porto"),
        ("i meant toronto, not vancouver 🙈", "vancouver", "toronto"),
        ("sorry, Madrid! not Barcelona", "Barcelona", "Madrid"),
        ("oops I'm actually in Austin not Dallas", "Dallas", "Austin"),
        ("lisbon? no, porto", "lisbon", "porto"),
        ("berlin?? nope bremen", "berlin", "bremen"),
        ("porto actually, not lisbon", "lisbon", "porto"),
        ("it should be porto not lisbon", "lisbon", "porto"),
        ("*vegan not vegetarian", "vegetarian", "vegan"),
        ("no wait, i said mumbai but it's pune", "mumbai", "pune"),
        # An address keeps its dots: the swap is the whole address, never a piece of it.
        (
            "sorry typo, my email is jane.doe@proton.me not jane.doe@protn.me",
            "jane.doe@protn.me",
            "jane.doe@proton.me",
        ),
    ],
)
def test_a_bare_correction_is_read_as_the_words_it_swaps(text: str, old: str, new: str) -> None:
    assert read_swap(text) == Swap(old, new)


@pytest.mark.parametrize(
    "text",
    [
        "is it lisbon? no idea",
        "lisbon? no idea",
        "I said no but it's fine",
        "i'm not in dallas anymore",
    ],
)
def test_a_question_or_a_denial_swaps_nothing(text: str) -> None:
    assert read_swap(text) is None


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        ("update my billing to monthly pls, annual is too much rn", "billing_cycle", "monthly"),
        ("just switched to monthly billing, money's tight", "billing_cycle", "monthly"),
        ("mi correo nuevo es ana.gomez@gmail.com", "email", "ana.gomez@gmail.com"),
        ("email changed → m.silva@proton.me", "email", "m.silva@proton.me"),
        (
            "pls use priya.n@gmail.com from now on, the work one is gone",
            "email",
            "priya.n@gmail.com",
        ),
    ],
)
def test_a_high_stakes_change_is_read_with_its_marker(
    text: str, attribute: str, value: str
) -> None:
    assert changed(text, attribute) == {(value, True)}


@pytest.mark.parametrize(
    ("text", "attribute"),
    [
        ("my wife changed her email to kim@x.com", "email"),
        ("should i change my email to something more professional?", "email"),
        ("my boss said 'use jo@corp.com from now on' lol", "email"),
        ("i might switch to annual billing next year", "billing_cycle"),
        ("would you switch to monthly billing?", "billing_cycle"),
        ("my sister wants to update her billing to annual", "billing_cycle"),
        ("my partner's new number is +1 206 555 0199", "phone"),
    ],
)
def test_someone_elses_or_a_planned_change_is_not_read(text: str, attribute: str) -> None:
    assert changed(text, attribute) == set()


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        ("just settled in melbourne a few days ago", "home_city", "Melbourne"),
        ("finally settled in edinburgh after 3 months of airbnbs", "home_city", "Edinburgh"),
        ("now in nairobi for good", "home_city", "Nairobi"),
        ("the berlin life is treating me well", "home_city", "Berlin"),
        ("im london-based now fyi", "home_city", "London"),
        ("mudei pra curitiba semana passada", "home_city", "Curitiba"),
        ("nos mudamos a valencia hace dos semanas", "home_city", "Valencia"),
        (
            "moved to mexico city 2 weeks ago, still figuring out the metro",
            "home_city",
            "Mexico City",
        ),
        ("we've been living in porto since the summer and i love it", "home_city", "Porto"),
        (
            "haha yeah so anyway the move to denver happened on the 1st, brain is still fried",
            "home_city",
            "Denver",
        ),
        ("the move to oslo happened last weekend 🎉", "home_city", "Oslo"),
        ("we got engaged last night 💍", "relationship_status", "engaged"),
        ("we got married last saturday!!!", "relationship_status", "married"),
        ("upgraded to the team plan on friday", "plan", "Team"),
        ("after 6 yrs in london we finally moved to brighton last month", "home_city", "Brighton"),
        # A lower-case place of several words, one of them an everyday word: the gazetteer's
        # longest opening is the place, not the words a name-by-case reading runs on into.
        ("settled in cape town since march", "home_city", "Cape Town"),
        (
            "we moved to austin two weeks ago and the tacos alone were worth it",
            "home_city",
            "Austin",
        ),
        # A city's initials are stored by its name, never as typed ("Sf").
        ("moved to sf in january, finally", "home_city", "San Francisco"),
        ("we moved to LA last year", "home_city", "Los Angeles"),
        ("relocated from boston to atlanta in june", "home_city", "Atlanta"),
    ],
)
def test_a_change_said_in_passing_is_read(text: str, attribute: str, value: str) -> None:
    assert {v for v, _ in changed(text, attribute)} == {value}


@pytest.mark.parametrize(
    ("text", "attribute"),
    [
        ("moved into our new place in spring", "home_city"),  # the season, not Spring, Texas
        ("my cousin relocated to singapore", "home_city"),
        ("we're moving to oslo next spring", "home_city"),
        ("thinking about the berlin life tbh", "home_city"),
        ("is london-based better for startups?", "home_city"),
        ("in paris for good food this weekend", "home_city"),
        ("i was living in porto when i was a kid", "home_city"),
        ("my friends got engaged last night", "relationship_status"),
        ("we got separated in the crowd at the festival", "relationship_status"),
        ("thinking of switching to pro next month", "plan"),
        ("i plan on upgrading to the team plan", "plan"),
        ("moving to glasgow was never an option", "home_city"),  # a move denied
        ("after my brother moved to leeds we finally visited", "home_city"),
        ("my sister relocated from boston to atlanta", "home_city"),
        ("we moved from the old office to the new one", "home_city"),
    ],
)
def test_a_look_alike_of_a_change_is_not_read(text: str, attribute: str) -> None:
    assert changed(text, attribute) == set()
