"""Statements followed by a remark whose negation is about something else.

The probes were written before the reader ran on them: "fully remote now, no more
train" states the arrangement, and the "no more" is about the train. The look-alikes
are remarks that take the statement back ("not really", "not anymore", "no wait"),
someone else's statement, a plan, a wish, or a past state; none may give the value.
"""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()


def values(text: str) -> set[tuple[str | None, object]]:
    return {(c.attribute, c.value) for c in read_turn(text, SCHEMA, ask=True) if c.question is None}


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("fully remote now, no more train", "work_arrangement", "remote"),
        ("i'm fully remote now, no more commuting lol", "work_arrangement", "remote"),
        ("i work from home full time now, no more office drama", "work_arrangement", "remote"),
        (
            "hybrid now, two days in the office, no more five day weeks",
            "work_arrangement",
            "hybrid",
        ),
        ("vegan three months now and honestly don't miss cheese", "diet", "vegan"),
        ("went vegetarian in march, no regrets", "diet", "vegetarian"),
        ("i'm vegetarian now, not a big deal", "diet", "vegetarian"),
        ("i'm pescatarian these days, no red meat for me", "diet", "pescatarian"),
        ("we're in lisbon now, never going back to london", "home_city", "Lisbon"),
        ("I live in Porto now, never been happier", "home_city", "Porto"),
        ("i'm based in toronto now, nothing like the winters back home", "home_city", "Toronto"),
        ("got engaged last week, still can't believe it", "relationship_status", "engaged"),
        ("I'm single again, no drama", "relationship_status", "single"),
        ("I work at Spotify now, no complaints", "employer", "Spotify"),
        ("i started at google last week, nothing fancy just a junior role", "employer", "Google"),
        ("switched to python at work, no more java thank god", "programming_languages", "Python"),
        # Run on without a comma, after "now" or a "lol".
        ("fully remote now no more train", "work_arrangement", "remote"),
        ("i'm remote now lol no more commute", "work_arrangement", "remote"),
        ("I'm vegetarian now, haven't had meat since january", "diet", "vegetarian"),
        ("I'm divorced now, no hard feelings", "relationship_status", "divorced"),
        ("i'm hybrid now, not bad at all", "work_arrangement", "hybrid"),
        ("started at monzo last week, no more consulting", "employer", "Monzo"),
    ],
)
def test_a_statement_is_read_past_a_remark_that_denies_something_else(
    text: str, slot: str, value: str
) -> None:
    assert (slot, value) in values(text)


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("I'm a PM now, no more coding", "job_title"),
        ("im a product manager now, no more writing code all day", "job_title"),
        ("i'm a nurse now, no more retail", "job_title"),
        ("I'm allergic to peanuts, nothing serious though", "allergies"),
    ],
)
def test_the_slot_gets_a_value_not_a_question(text: str, slot: str) -> None:
    assert any(attribute == slot and value for attribute, value in values(text))


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        # The remark takes the statement back.
        ("i'm vegan now, not really", "diet", "vegan"),
        ("i'm remote now, not anymore", "work_arrangement", "remote"),
        ("i'm vegan, not", "diet", "vegan"),
        ("i live in leeds, no longer tho", "home_city", "Leeds"),
        ("i'm fully remote, not officially", "work_arrangement", "remote"),
        ("I work at google, not anymore though", "employer", "Google"),
        ("i'm hybrid, not yet", "work_arrangement", "hybrid"),
        ("i'm vegetarian, never again", "diet", "vegetarian"),
        ("we're in lisbon, no not really, still in porto", "home_city", "Lisbon"),
        ("i'm vegan now, not really lol", "diet", "vegan"),
        ("i was remote, no more though", "work_arrangement", "remote"),
        ("i work at google, nah not anymore", "employer", "Google"),
        # The negation is the statement's own.
        ("not remote anymore, back in the office", "work_arrangement", "remote"),
        ("i'm not vegan, no", "diet", "vegan"),
        ("not vegan anymore, no more tofu for me", "diet", "vegan"),
        ("i don't live in london anymore, no", "home_city", "London"),
        ("never been vegan, no way", "diet", "vegan"),
        ("i'm no longer married, no", "relationship_status", "married"),
        ("no, i'm not vegetarian, never was", "diet", "vegetarian"),
        ("no more remote for me, they want us in five days", "work_arrangement", "remote"),
        ("i'm not working at google anymore, no", "employer", "Google"),
        ("i'm not remote now, no more wfh", "work_arrangement", "remote"),
        # Someone else's, a plan, a wish, a past state, a remark about a kind of thing.
        ("my sister is vegan now, no more cheese for her", "diet", "vegan"),
        ("she's fully remote now, no more train for her", "work_arrangement", "remote"),
        ("my wife is vegan now, no more meat in the house", "diet", "vegan"),
        ("my boss moved to bristol, nobody saw it coming", "home_city", "Bristol"),
        ("if i go remote, no more train", "work_arrangement", "remote"),
        ("i wish i were remote, no more train", "work_arrangement", "remote"),
        ("thinking of going vegan, no meat at all", "diet", "vegan"),
        ("i was vegan for years, not anymore", "diet", "vegan"),
        ("i used to be vegan, no regrets", "diet", "vegan"),
        ("used to live in paris, never again", "home_city", "Paris"),
        ("i was living in berlin, never liked it", "home_city", "Berlin"),
        ("remote work is great, not for me though", "work_arrangement", "remote"),
        ("vegan food is nice, not that i'm vegan", "diet", "vegan"),
        ("we're vegan for january, no cheese for a month", "diet", "vegan"),
        ("i'm in leeds this week, no wifi at the hotel", "home_city", "Leeds"),
    ],
)
def test_a_remark_that_takes_the_statement_back_gives_no_value(
    text: str, slot: str, value: str
) -> None:
    assert (slot, value) not in values(text)


def test_the_old_city_named_in_the_remark_is_not_the_home() -> None:
    assert (
        values("we're in lisbon now, never going back to london") & {("home_city", "London")}
        == set()
    )
