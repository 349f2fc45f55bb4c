"""Asides that state what the speaker is ("as a vegan, is honey ok??"), read even in a
question, only at a sentence's start and only from a closed vocabulary."""

from __future__ import annotations

import pytest

from slotwise.processors.rules.asides import read_asides
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()


def slots(text: str) -> set[tuple[str | None, object]]:
    return {(c.attribute, c.value) for c in read_turn(text, SCHEMA) if c.attribute is not None}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("as a vegan, is honey ok??", {("diet", "vegan")}),
        ("as a pescatarian can i eat caesar salad?", {("diet", "pescatarian")}),
        (
            "as a type 1 diabetic, is this cake going to wreck me?",
            {("medical_conditions", "type 1 diabetes")},
        ),
        ("as a lifelong vegetarian this soup recipe slaps", {("diet", "vegetarian")}),
        ("as a nurse myself, that sounds exhausting", {("job_title", "nurse")}),
        ("ok. As an American, how do I file taxes here?", {("nationality", "American")}),
    ],
)
def test_an_aside_states_what_the_speaker_is(text: str, expected: set[tuple[str, object]]) -> None:
    assert slots(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "my wife, as a vegan, hates this",  # not at the sentence's start: hers
        "as a kid i was vegan",  # a stage of life
        "as a parent, any tips?",  # no vocabulary value
        "as a student I lived in Leeds",  # a stage of life, not a job now
    ],
)
def test_an_aside_that_is_not_the_speakers_state_reads_nothing(text: str) -> None:
    assert read_asides(text) == []
