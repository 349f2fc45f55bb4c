"""Small talk in a long conversation is not a change to ask a human about.

Real dialogue is mostly about the listener, about things in general, about a
dish or a day out; a question raised by every mention of a dog or a "we …
together" would bury the review queue. Sentences written for this test in the
register of two friends catching up.
"""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn, slots_asked, slots_spoken

SCHEMA = AttributeSchema.load()


def asked(text: str) -> set[str | None]:
    return slots_asked(text, SCHEMA)


@pytest.mark.parametrize(
    "text",
    [
        # Things in general.
        "Pets make us so much happier, don't they?",
        "Meeting new puppies must be the best part of that job.",
        "Getting to see all the new kittens at the shelter must bring so much joy.",
        "Finding dog-friendly cafes is so frustrating, I totally get it.",
        "Dogs really do know when you need a hug.",
        # The listener's life, or advice to them.
        "Sorry your cats have been off their food lately.",
        "You don't need more dogs to be happy, honestly.",
        "I picked up this new kitten toy for you!",
        "You can swap butter for dairy-free spread in most bakes.",
        # A dish, a day out, a pastime shared.
        "This dairy-free cheesecake recipe finally came out right.",
        "We love cooking together lately, especially curries.",
        "We prefer board games together on rainy nights.",
        # Someone else's death, someone else's wedding.
        "My grandmother passed away last spring, it still hurts.",
        "I took the week off work when my grandad passed.",
        "Everything changed for the family when our uncle died.",
        "My girlfriend's old dog died last week, she's heartbroken.",
        # A compound adjective, a likeness, a memory, a place told by what happened there.
        "Ugh, hunting for pet-friendly rentals is exhausting.",
        "The whole block is dog-free now, which is a shame.",
        "Exams are over, it's like being a puppy let off the lead.",
        "Honestly it felt as if I'd finally got married to my job.",
        "That song reminds me of when I had a cat who sang along.",
        "That little chapel is where we got married, it still makes me smile.",
        "It's where I adopted my first dog, years back.",
        # A thing described, people in general, a topic.
        "Made a new soup, it's vegan and nobody even noticed.",
        "They're gluten-free now at the bakery, finally.",
        "It breaks my heart how some people treat rescue cats lately.",
        "Booked a class about training puppies next week.",
        "Just finished a new book on keeping chickens.",
        # "Not to" denies no state: an infinitive, not a correction.
        "I get how annoying it is not to find anywhere open late.",
    ],
)
def test_small_talk_raises_no_question(text: str) -> None:
    assert asked(text) == set(), asked(text)


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        # The speaker's own change beside the same words is still asked about.
        ("My husband passed away in March.", "relationship_status"),
        ("Our dog died last week, the house is so quiet.", "pets"),
        ("We moved last month, that's where we live now.", "home_city"),
        ("It's official, I'm vegan now.", "diet"),
        ("We adopted a new puppy last week!", "pets"),
        ("vegan since march, it's been easier than I thought", "diet"),
    ],
)
def test_the_speakers_own_change_beside_small_talk_is_still_heard(text: str, slot: str) -> None:
    assert slot in slots_spoken(text, SCHEMA)
    assert all(c.value is None for c in read_turn(text, SCHEMA, ask=True) if c.question), text
