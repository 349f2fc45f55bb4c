"""The uncertain middle for the slots people name in passing: a change told about a zone,
a child, a pet, a language, a school, a birthday or a way to reach the speaker becomes a
question about that slot; one more of a slot that holds several does not."""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import slots_asked

SCHEMA = AttributeSchema.load()


def asked(text: str) -> set[str | None]:
    return slots_asked(text, SCHEMA)


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("3 hrs behind everyone at work now", "timezone"),
        ("we had a baby last week, sleep is a memory", "children_count"),
        ("we rehomed the dog, it was too much for the flat", "pets"),
        ("I dropped out of uni in the end", "education"),
        ("oops, the birthday I gave you was wrong", "date_of_birth"),
        ("no more texts, message me on signal instead", "preferred_contact_method"),
        ("finally settled somewhere with a garden", "home_city"),
    ],
)
def test_a_change_named_by_the_slots_words_is_asked_about(text: str, slot: str) -> None:
    assert slot in asked(text)


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("adopted a second cat last week", "pets"),
        ("my first language is actually yoruba", "languages"),
        ("my sister had a baby last week", "children_count"),
        ("would you rather text or email me", "preferred_contact_method"),
    ],
)
def test_no_question_where_nothing_held_changed(text: str, slot: str) -> None:
    assert slot not in asked(text)
