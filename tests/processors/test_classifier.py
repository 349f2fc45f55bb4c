"""The MiniLM attribute classifier: nearest exemplars place what the rules could not, and
only a value read with confidence is emitted."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from slotwise.processors.extract import RulesExtractor, extract_records
from slotwise.processors.rules.classifier import (
    ExemplarClassifier,
    candidate_clause,
    load_exemplars,
    read_value,
)
from slotwise.processors.rules.clauses import Clause, split_clauses
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Observation

SCHEMA = AttributeSchema.load()
SAID = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)

# A tiny fake: a text's vector is its share of each keyword, so "cashews" is near the
# allergy exemplars and "coffee" near the small talk.
_AXES = ("hives", "cashews", "coffee", "plan")


class KeywordEmbedder:
    model_name = "fake"
    dimension = len(_AXES)

    def __init__(self) -> None:
        self.batches: list[int] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.batches.append(len(texts))
        out = []
        for text in texts:
            raw = [float(axis in text.lower()) for axis in _AXES]
            norm = sum(v * v for v in raw) ** 0.5 or 1.0
            out.append([v / norm for v in raw])
        return out


EXEMPLARS = {
    "allergies": ["hives", "cashews give me hives"],
    "plan": ["the plan"],
    "_none": ["coffee"],
}


def observe(text: str) -> Observation:
    return Observation(observation_id="obs-1", subject_id="user-42", text=text, observed_at=SAID)


def slots(text: str, classifier: ExemplarClassifier | None) -> set[tuple[str | None, object]]:
    return {
        (r.attribute, r.value)
        for r in extract_records(observe(text), SCHEMA, classifier)
        if isinstance(r, CandidateFact)
    }


def test_a_clause_the_rules_miss_is_placed_and_its_value_read() -> None:
    classifier = ExemplarClassifier(KeywordEmbedder(), exemplars=EXEMPLARS)
    text = "I get hives from cashews"
    assert ("allergies", "cashews") not in slots(text, None)
    assert ("allergies", "cashews") in slots(text, classifier)


def test_no_readable_value_emits_nothing() -> None:
    classifier = ExemplarClassifier(KeywordEmbedder(), exemplars=EXEMPLARS)
    assert slots("I get hives from something", classifier) == slots(
        "I get hives from something", None
    )


def test_small_talk_and_ties_stay_unplaced() -> None:
    classifier = ExemplarClassifier(KeywordEmbedder(), exemplars=EXEMPLARS)
    assert classifier.classify(["I had coffee", "hives coffee"]) == [None, None]


@pytest.mark.parametrize(
    "text",
    [
        "my sister gets hives from cashews",  # someone else
        "do cashews give me hives?",  # a question
        "I used to get hives from cashews",  # no longer so
        "cashews gave me hives until 2020",  # a closed period
        "I don't get hives from cashews",  # a negation
        "our netflix is on the premium plan",  # a thing, not the speaker
    ],
)
def test_the_cheap_filters_keep_clauses_from_the_embedder(text: str) -> None:
    assert not any(candidate_clause(c) for c in split_clauses(text))


def test_one_batch_per_turn_and_the_exemplars_once() -> None:
    embedder = KeywordEmbedder()
    classifier = ExemplarClassifier(embedder, exemplars=EXEMPLARS)
    slots("I get hives from cashews. I get hives from shellfish", classifier)
    slots("I get hives from peanuts", classifier)
    assert embedder.batches == [4, 2, 1]


def test_a_single_valued_slot_needs_one_clear_value() -> None:
    assert read_value("diet", "I went fully vegan") == ["vegan"]
    assert read_value("diet", "vegan or vegetarian, I go back and forth") == []
    assert read_value("allergies", "cats and dust mites") == ["cats", "dust mites"]
    assert read_value("plan", "we dropped to the team plan") == ["Team"]
    assert read_value("name", "I'm Ana") == []


def test_the_extractor_runs_without_an_embedder() -> None:
    extracted = asyncio.run(RulesExtractor(SCHEMA).extract(observe("I'm vegan")))
    assert [(c.attribute, c.value) for c in extracted if isinstance(c, CandidateFact)] == [
        ("diet", "vegan")
    ]


def test_the_shipped_exemplars_cover_a_none_class() -> None:
    exemplars = load_exemplars()
    assert "_none" in exemplars
    assert all(a == "_none" or SCHEMA.get(a) is not None for a in exemplars)


def test_with_the_real_minilm() -> None:
    from slotwise.models.embedders import embedder_named  # noqa: PLC0415 - loads the model

    classifier = ExemplarClassifier(embedder_named("minilm"))
    assert classifier.classify(["we just got engaged", "I watched a film last night"]) == [
        "relationship_status",
        None,
    ]


@pytest.mark.parametrize(
    ("text", "zone"),
    [
        ("relocated to lisbon, same clock as london which is handy", "Europe/Lisbon"),
        ("I moved to Lisbon", None),  # a residence city alone is only home_city
        ("I'm on CET, I moved to Lisbon, an hour behind my team", "CET"),  # a named zone wins
    ],
)
def test_a_home_city_implies_its_zone_only_when_the_turn_talks_about_time(
    text: str, zone: str | None
) -> None:
    zones = {v for a, v in slots(text, None) if a == "timezone"}
    assert zones == ({zone} if zone else set())


class ForgettingEmbedder(KeywordEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.forgotten: list[str] = []

    def forget(self, texts: Sequence[str]) -> int:
        self.forgotten += texts
        return len(texts)


def test_no_clause_outlives_the_turn_in_a_shared_cache() -> None:
    embedder = ForgettingEmbedder()
    ExemplarClassifier(embedder, exemplars=EXEMPLARS).classify(["I get hives from cashews"])
    assert embedder.forgotten == ["I get hives from cashews"]


@pytest.mark.parametrize(
    ("text", "worth"),
    [
        ("we cancelled the Pro subscription", False),  # names the value it left
        ("I ditched the enterprise tier last month", False),
        ("we let the team contract lapse", False),
        ("we dropped to the free plan after the trial", True),  # names the value it took
    ],
)
def test_a_clause_that_leaves_a_value_is_not_placed(text: str, worth: bool) -> None:
    assert candidate_clause(Clause(text, cased=True, tense=None)) is worth
