"""A classified slot needs the clause to say what the slot is about: liking is not an
allergy, a business plan is not a subscription tier, a vegan dish is not a diet."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from slotwise.processors.rules.classifier import ExemplarClassifier
from slotwise.processors.rules.evidence import supported
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()

# A fake whose vector is the share of each keyword: any clause naming one of them sits
# right on that slot's exemplar, so only the evidence decides what is kept.
_AXES = ("peanuts", "cats", "plan", "tier", "vegan", "weather")
EXEMPLARS = {
    "allergies": ["peanuts", "cats"],
    "plan": ["plan", "tier"],
    "diet": ["vegan"],
    "_none": ["weather"],
}


class KeywordEmbedder:
    model_name = "fake"
    dimension = len(_AXES)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            raw = [float(axis in text.lower()) for axis in _AXES]
            norm = sum(v * v for v in raw) ** 0.5 or 1.0
            out.append([v / norm for v in raw])
        return out


CLASSIFIER = ExemplarClassifier(KeywordEmbedder(), exemplars=EXEMPLARS)


def slots(text: str) -> set[tuple[str | None, object]]:
    read = read_turn(text, SCHEMA, CLASSIFIER)
    return {(c.attribute, c.value) for c in read if c.attribute is not None}


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I get itchy eyes around cats", {("allergies", "cats")}),
        ("I break out in a rash from peanuts", {("allergies", "peanuts")}),
        ("I really adore cats, they are the best", set()),  # liking is not an allergy
        ("I'm such a fan of peanuts on toast", set()),
        ("we pay for the enterprise tier", {("plan", "Enterprise")}),
        ("I'm on the business plan at work", {("plan", "Business")}),
        ("I'm finishing the business plan for the bank", set()),  # a document
        ("I drafted a team plan for the offsite", set()),
        ("I baked vegan brownies for the party", set()),  # food, not how the speaker eats
        ("I went vegan in the spring", {("diet", "vegan")}),
        ("I'm tempted to go vegan after that film", set()),  # a pull, not a diet
    ],
)
def test_a_classified_slot_needs_its_words(text: str, kept: set[tuple[str, str]]) -> None:
    assert slots(text) == kept


@pytest.mark.parametrize(
    ("attribute", "text", "expected"),
    [
        ("allergies", "shellfish makes me sick", True),
        ("allergies", "I love shellfish, it never makes me sick", False),
        ("medical_conditions", "I was diagnosed with asthma", True),
        ("medical_conditions", "I love reading about asthma research", False),
        ("plan", "we upgraded to pro", True),
        ("plan", "I have a lesson plan for Monday", False),
        ("diet", "I'm vegetarian these days", True),
        ("diet", "I ordered the gluten-free pizza", False),
        ("home_city", "anything at all", True),  # slots not named need no more
    ],
)
def test_supported(attribute: str, text: str, expected: bool) -> None:
    assert supported(attribute, text) is expected
