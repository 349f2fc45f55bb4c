"""The gate before model extraction: it must pass every turn that may state a fact."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from slotwise.loadtest.gate import REQUIRED_RECALL, score_split
from slotwise.processors.gate import Decision, GatedExtractor, TurnGate
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.config import Settings
from slotwise.topics.records import CandidateFact, Command, Observation

DATASETS = Path(__file__).resolve().parents[2] / "datasets"
GATE = TurnGate(AttributeSchema.load())
AT = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


def turn(text: str, speaker: str = "user") -> Observation:
    return Observation(
        observation_id="o-1", subject_id="u-1", speaker=speaker, text=text, observed_at=AT
    )


@pytest.mark.parametrize("split", ["dev", "test"])
def test_recall_on_fact_bearing_turns_holds(split: str) -> None:
    score = score_split(GATE, DATASETS / f"turns.{split}.jsonl")

    assert score.fact_bearing > 100
    assert score.recall >= REQUIRED_RECALL, score.missed
    assert score.skipped > 0  # it does skip something: a gate that passes all is no gate


@pytest.mark.parametrize(
    "text",
    [
        "I'm allergic to peanuts.",
        "work at zalando, backend stuff mostly",
        "married w 2 kids, send coffee",
        "nurse, 12 hr shifts, icu",
        "Please forget where I live.",
        "delete everything you know about me",
        "As a vegetarian, what should I cook tonight?",
        "Thanks! I moved to Porto last month, by the way.",
        "They're starting small, making basic games and stories.",
    ],
)
def test_turns_that_may_state_a_fact_are_asked_about(text: str) -> None:
    assert GATE.decide(turn(text)) == "ask"


@pytest.mark.parametrize(
    "text",
    [
        "Sounds great, Jo! Did you happen to take any photos of it?",
        "Thanks, Melanie! Your kind words mean a lot.",
        "You too!",
        "Where is it?",
        "Wow, I'm so happy for you! Let me know how it goes.",
        "I bet you had a blast. Congrats on how far you've come.",
    ],
)
def test_turns_put_to_the_other_person_are_skipped(text: str) -> None:
    assert GATE.decide(turn(text)) == "skip"


def test_what_an_assistant_says_is_always_asked_about() -> None:
    # It may report what the user said ("you told me you're vegan").
    assert GATE.decide(turn("Since you told me you're vegan, here you go.", "assistant")) == "ask"


class Recording:
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def extract(self, observation: Observation) -> Sequence[CandidateFact | Command]:
        self.seen.append(observation.text)
        return []


def test_the_gated_extractor_asks_only_about_what_the_gate_passes() -> None:
    inner, decisions = Recording(), list[Decision]()
    gated = GatedExtractor(inner, GATE, decisions.append)

    async def both() -> None:
        await gated.extract(turn("Where is it?"))
        await gated.extract(turn("I work at Stripe."))

    asyncio.run(both())

    assert inner.seen == ["I work at Stripe."]
    assert decisions == ["skip", "ask"]


def test_the_gate_is_on_by_default_and_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLOTWISE_EXTRACT_GATE", raising=False)
    assert Settings().extract_gate is True
    monkeypatch.setenv("SLOTWISE_EXTRACT_GATE", "false")
    assert Settings().extract_gate is False
