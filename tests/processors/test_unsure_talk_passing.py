"""News said in passing before a question, a wish, a plan or a condition: the splitter
drops the sentence for the value readers, and the uncertain middle still asks about the
news; and the look-alikes, where the condition, the question, a quotation or someone
else governs the news too.

Written for the reader before it was run on them, in the ways people type; not taken from
the evaluation data."""

from __future__ import annotations

import pytest

from slotwise.processors.rules.clauses import split_clauses
from slotwise.processors.rules.passing import said_in_passing
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()

NEWS = [
    ("since we moved to leeds, any good climbing gyms near me?", "home_city"),
    ("now that i'm vegan what do i do about honey?", "diet"),
    ("I started at Google on Monday, any tips for the first week?", "employer"),
    ("new job starts monday, wish me luck", "employer"),
    ("we moved to bristol, hope the schools are ok", "home_city"),
    ("got married last month, would recommend lol", "relationship_status"),
    ("as of today I'm on the Pro plan, if that matters", "plan"),
    ("went vegan in january and honestly might never go back", "diet"),
    ("my GP moved me onto sertraline, should help", "medications"),
    ("we're in Lisbon for good now, maybe forever", "home_city"),
    ("finally left london, planning a trip back at xmas", "home_city"),
    ("now that we've moved, can you update my address?", "home_city"),
    ("since I quit my job, how do I cancel the team plan?", "employer"),
    (
        "I left Stripe in June. I'm at Plaid now. The commute is better. Maybe I'll get a bike.",
        "employer",
    ),
    (
        "the kids are fine, my mum says hi, the dog's old. oh and I'm divorced now.",
        "relationship_status",
    ),
]


@pytest.mark.parametrize(("text", "slot"), NEWS)
def test_news_before_a_question_or_a_wish_is_asked_about(text: str, slot: str) -> None:
    found = [c for c in read_turn(text, SCHEMA, ask=True) if c.attribute == slot]
    assert found
    assert all(c.value is None for c in found if c.question is not None)


@pytest.mark.parametrize(
    "text",
    [
        "if we moved to bristol would the schools be ok?",
        "should I quit my job?",
        "might go vegan in january",
        "my sister moved to Austin, maybe I'll visit",
        "hope to be married by 30",
        "would you recommend moving to lisbon?",
        "what's a good gym near leeds?",
        "my boss got married last month, would recommend she says",
        "if I move to leeds, will my plan change?",
        "Is it weird that I moved to leeds, or normal?",
        "as a kid I moved around a lot, does that matter?",
        '"we moved to leeds" is what she said, right?',
        "ben texted 'my email changed to ben@hey.com', should I update his contact?",
        "my friend just quit her job, should I too?",
        "thinking of going remote, is that a good idea?",
        "if I get the job, I'll move to leeds",
    ],
)
def test_a_question_or_condition_that_governs_the_news_asks_nothing(text: str) -> None:
    assert not [c for c in read_turn(text, SCHEMA, ask=True) if c.question is not None]


def heard_again(text: str) -> list[str]:
    return [c.text for c in said_in_passing(text, list(split_clauses(text)))]


def test_only_what_the_splitter_dropped_is_heard_again() -> None:
    assert heard_again("I moved to Leeds last month.") == []
    assert heard_again("we moved to bristol, hope the schools are ok") == ["we moved to bristol"]
    assert heard_again("if I get the job, I'll move to leeds") == []
    assert heard_again("what's a good gym near leeds?") == []
