"""The in-process LoCoMo tool counts what the worker would store: facts written, with the
review questions and the restatements apart."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from slotwise.loadtest.locomo import Turn
from slotwise.loadtest.locomo_facts import replay

SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _turns(*texts: str) -> list[Turn]:
    return [
        Turn("conv-1", "Ana", 1, i, f"D1:{i + 1}", text, SAID + timedelta(seconds=30 * i))
        for i, text in enumerate(texts)
    ]


def test_restatements_and_review_questions_are_not_facts_written() -> None:
    summary = asyncio.run(
        replay(
            _turns(
                "Took my dogs to the lake today!",
                "my dogs slept all afternoon after that",  # the same pet again: a NOOP
                "we're no longer on that plan",  # a slot with no value read: a question
                "I'm volunteering at the library.",
            )
        )
    )
    assert summary.questions == 1
    assert all(e.attribute != "plan" for e in summary.extractions)
    assert summary.decisions.get("ADD") == 2
    assert summary.written == 2  # the dogs once, the volunteering
    assert summary.facts == 3
