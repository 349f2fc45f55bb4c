"""Small talk in a long conversation is not a change to ask a human about.

Real dialogue is mostly about the listener, about things in general, about a
dish or a day out; a question raised by every mention of a dog or a "we …
together" would bury the review queue. Sentences written for this test in the
register of two friends catching up.
"""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import slots_asked

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
    ],
)
def test_small_talk_raises_no_question(text: str) -> None:
    assert asked(text) == set(), asked(text)
