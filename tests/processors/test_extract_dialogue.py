"""The offline extractor on open-ended dialogue: what two people tell each other about
their lives in passing, and what only sounds like a fact about the speaker."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slotwise.processors.extract import extract_records
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Observation

SCHEMA = AttributeSchema.load()
SAID = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


def facts(text: str) -> list[CandidateFact]:
    observation = Observation(
        observation_id="obs-1", subject_id="user-42", text=text, observed_at=SAID
    )
    return [r for r in extract_records(observation, SCHEMA) if isinstance(r, CandidateFact)]


def texts(text: str) -> list[str]:
    return [f.text for f in facts(text)]


@pytest.mark.parametrize(
    "text",
    [
        "I'm looking forward to working remotely",
        "I'm eager to work remotely once the move is done",
        "I'm tempted to work remotely from the coast",
    ],
)
def test_a_pull_towards_something_is_not_a_fact(text: str) -> None:
    assert [f for f in facts(text) if not f.question] == []


def test_not_long_ago_dates_a_statement_without_denying_it() -> None:
    assert texts("Oh, I opened a little bakery not so long ago!") == [
        "User opened a little bakery not so long ago."
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'I finally finished reading "The Left Hand of Darkness" - loved it.',
            'User finally finished reading "The Left Hand of Darkness".',
        ),
        (
            "I've been playing a puzzle game called 'Lumen Drift' every night.",
            "User has been playing a puzzle game called 'Lumen Drift' every night.",
        ),
    ],
)
def test_a_quoted_title_stays_in_the_fact(text: str, expected: str) -> None:
    assert texts(text) == [expected]


def test_words_in_quotes_are_still_not_read_as_the_speakers() -> None:
    assert {(f.attribute, f.value) for f in facts('my mug says "I work at NASA"')} == set()
