"""Slot matching's pure parts: the question shown, the answer accepted, the offline matcher."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from slotwise.processors.model import Neighbour, SlotAnswer
from slotwise.processors.resolve import new_fact
from slotwise.processors.slot_match import OfflineSlotMatcher, parse_answer, render_question
from slotwise.processors.testing import ScriptedMatcher
from slotwise.topics.records import CandidateFact

AT = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


def candidate(cid: str, text: str) -> CandidateFact:
    return CandidateFact.model_validate(
        {
            "schema": "candidate/1",
            "candidate_id": cid,
            "subject_id": "user-42",
            "text": text,
            "observed_at": AT,
        }
    )


def neighbours(*scored: tuple[str, float]) -> list[Neighbour]:
    return [
        Neighbour(
            fact=new_fact(candidate(f"n{i}", text), None, now=AT, embedding_model=None),
            similarity=similarity,
        )
        for i, (text, similarity) in enumerate(scored)
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", 0),
        ("3", 2),
        (" 2 ", 1),
        ("2\n", 1),
        ("#2", 1),
        ("2.", 1),
        (3, 2),
        ("NONE", None),
        ("none", None),
        (" None. ", None),
    ],
)
def test_accepted_answers(raw: str | int, expected: int | None) -> None:
    assert parse_answer(raw, 3) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "0",  # the list starts at 1
        "4",  # off the end of a 3-item list
        "999",
        "1000",
        0,
        -1,
        4,
        True,  # a bool is not a number here
        None,
        "",
        "   ",
        "1, 2",  # one slot, one answer
        "1 or 2",
        "Memory 1",
        "The answer is 2.",
        "NONE of them",
        "N/A",
        "2a",
        "-1",
        "1.5",
        "6f1c3d2e-5b7a-4c1e-9a53-2d8e0f6b9c41",  # an id, as models invent them
        "fact-1",
    ],
)
def test_rejected_answers_raise_value_error(raw: object) -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_answer(raw, 3)  # type: ignore[arg-type]


def test_no_number_is_accepted_for_an_empty_list() -> None:
    with pytest.raises(ValueError):
        parse_answer("1", 0)
    assert parse_answer("NONE", 0) is None


def test_question_numbers_neighbours_and_never_shows_ids() -> None:
    shown = neighbours(("User lives in Lisbon.", 0.89), ("User likes surfing.", 0.4))
    question = render_question(candidate("c1", "User visited Lisbon in March."), shown)
    assert '"User visited Lisbon in March."' in question
    assert "1. User lives in Lisbon." in question
    assert "2. User likes surfing." in question
    assert "NONE" in question and "related topics" in question
    for n in shown:
        assert n.fact.fact_id not in question
        assert n.fact.subject_id not in question


def test_offline_matcher_answers_none_and_flags_close_pairs() -> None:
    matcher = OfflineSlotMatcher(review_similarity=0.85)
    visit = candidate("c1", "User visited Lisbon in March.")
    far = asyncio.run(matcher.match(visit, neighbours(("User lives in Lisbon.", 0.84))))
    assert far == SlotAnswer(index=None, raw="NONE")
    close = neighbours(("User likes surfing.", 0.86), ("User lives in Lisbon.", 0.89))
    answer = asyncio.run(matcher.match(visit, close))
    assert answer.index is None and answer.error is None
    assert answer.review_reason is not None
    assert close[1].fact.fact_id in answer.review_reason  # the closest one is named
    assert asyncio.run(matcher.match(visit, [])).review_reason is None


def test_scripted_matcher_parses_like_an_adapter_and_records_calls() -> None:
    shown = neighbours(("User lives in Lisbon.", 0.89))
    failure = SlotAnswer(index=None, error="timeout")
    matcher = ScriptedMatcher(["1", "7", failure])
    visit = candidate("c1", "User visited Lisbon in March.")
    assert asyncio.run(matcher.match(visit, shown)) == SlotAnswer(index=0, raw="1")
    assert asyncio.run(matcher.match(visit, shown)) == SlotAnswer(index=None, raw="7")
    assert asyncio.run(matcher.match(visit, shown)) is failure
    assert matcher.rejected == 1
    assert [c.candidate for c in matcher.calls] == [visit] * 3
    assert matcher.calls[0].neighbours == tuple(shown)
    with pytest.raises(AssertionError, match="past its script"):
        asyncio.run(matcher.match(visit, shown))
