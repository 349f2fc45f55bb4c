"""The offline extractor on personal standing said in passing: a language's level, the way
to reach the speaker, pronouns left open, and the school behind a degree."""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()
READ = frozenset({"languages", "preferred_contact_method", "pronouns", "education"})


def slots(text: str) -> set[tuple[str | None, object]]:
    return {(c.attribute, c.value) for c in read_turn(text, SCHEMA) if c.attribute in READ}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fluent in Mandarin", {("languages", "Mandarin")}),
        ("my spanish is conversational", {("languages", "Spanish")}),
        ("my swahili is conversational, lived in arusha for two years", {("languages", "Swahili")}),
        ("I can get by in Italian", {("languages", "Italian")}),
        (
            "been learning korean for two years and can hold a conversation now",
            {("languages", "Korean")},
        ),
        ("whatsapp is easiest for me", {("preferred_contact_method", "whatsapp")}),
        ("best way to reach me is signal honestly", {("preferred_contact_method", "signal")}),
        ("you can reach me on whatsapp", {("preferred_contact_method", "whatsapp")}),
        ("email is best for me", {("preferred_contact_method", "email")}),
        ("I have a master's from Edinburgh University", {("education", "Edinburgh University")}),
        ("just enrolled at the Open University", {("education", "Open University")}),
    ],
)
def test_reads_standing_said_in_passing(text: str, expected: set[tuple[str, object]]) -> None:
    assert slots(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "my sister is fluent in Mandarin",
        "Ana is fluent in Mandarin",
        "is your french good",
        "my french is good enough to order coffee?",
        "my code is fluent in python",
        "I'm learning Japanese",
        "email is the best way to send the report",
        "whatsapp is best for the group chat",
        "my boss says email is best",
        "my son did his degree at Leeds University",
        "finished my MBA at UCT last year",
        "I have a meeting at Google",
    ],
)
def test_reads_nothing_that_is_not_the_speakers_standing(text: str) -> None:
    assert slots(text) == set()
