"""High-stakes slots: corroboration, and the subject's own stated change;
free-text restatements re-confirm instead of piling up."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from slotwise.processors.cascade import Cascade
from slotwise.processors.model import Decision
from slotwise.processors.resolve import new_fact, resolve
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import OfflineSlotMatcher
from slotwise.processors.testing import InMemoryFacts, InMemoryVectors
from slotwise.processors.zones import same_zone
from slotwise.topics.records import CandidateFact, Fact

SCHEMA = AttributeSchema.load()
EMAIL = SCHEMA.get("email")
THEN = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
NOW = THEN + timedelta(days=30)


def candidate(
    cid: str,
    value: str,
    *,
    source: str = "chat",
    change: bool = False,
    confidence: float = 0.9,
    at: datetime = NOW,
) -> CandidateFact:
    return CandidateFact(
        candidate_id=cid,
        subject_id="u",
        attribute="email",
        value=value,
        text=f"User's email is {value}.",
        observed_at=at,
        source=source,
        confidence=confidence,
        stated_change=change,
    )


def stored(value: str, **update: object) -> Fact:
    fact = new_fact(candidate("old", value, at=THEN), EMAIL, now=THEN, embedding_model=None)
    return fact.model_copy(update=update) if update else fact


def decide(new: CandidateFact, old: Fact) -> Decision:
    return resolve(new, EMAIL, [old], decided_by="exact", now=NOW, embedding_model=None).decision


def test_an_explicit_change_supersedes_an_email_said_once() -> None:
    assert (
        decide(candidate("c", "ana@new.org", change=True), stored("ana@old.org"))
        is Decision.SUPERSEDE
    )


@pytest.mark.parametrize(
    "old",
    [
        stored("ana@old.org", verification_count=1),  # re-confirmed since
        stored("ana@old.org", source="profile"),  # a system of record outranks a chat
        stored("ana@old.org", confidence=0.95),  # held more firmly than the candidate
    ],
)
def test_a_better_corroborated_incumbent_goes_to_review_even_on_a_stated_change(old: Fact) -> None:
    assert decide(candidate("c", "ana@new.org", change=True), old) is Decision.REVIEW


def test_a_contradiction_between_equals_that_states_no_change_goes_to_review() -> None:
    assert decide(candidate("c", "ana@new.org"), stored("ana@old.org")) is Decision.REVIEW


def test_a_more_trusted_candidate_supersedes_a_chat_incumbent() -> None:
    new = candidate("c", "ana@new.org", source="profile")
    assert decide(new, stored("ana@old.org")) is Decision.SUPERSEDE


def test_normal_stakes_still_supersede_a_corroborated_incumbent() -> None:
    spec = SCHEMA.get("employer")
    old = new_fact(
        CandidateFact(
            candidate_id="o",
            subject_id="u",
            attribute="employer",
            value="Acme",
            text="User works at Acme.",
            observed_at=THEN,
        ),
        spec,
        now=THEN,
        embedding_model=None,
    ).model_copy(update={"verification_count": 3})
    new = CandidateFact(
        candidate_id="n",
        subject_id="u",
        attribute="employer",
        value="Northwind",
        text="User works at Northwind.",
        observed_at=NOW,
    )
    result = resolve(new, spec, [old], decided_by="exact", now=NOW, embedding_model=None)
    assert result.decision is Decision.SUPERSEDE


def test_a_free_text_restatement_is_a_noop_that_reconfirms() -> None:
    said = CandidateFact(
        candidate_id="f1", subject_id="u", text="User ran the Boston Marathon.", observed_at=THEN
    )
    facts = InMemoryFacts()
    vectors = InMemoryVectors(lambda texts: [[1.0, float(len(t) % 3)] for t in texts])
    cascade = Cascade(
        SCHEMA,
        facts,
        vectors,
        OfflineSlotMatcher(),
        now=lambda: NOW,
        embedding_model=None,
        matcher_label="offline",
    )

    async def run() -> tuple[Decision, Decision, str]:
        first = await cascade.resolve(said)
        facts.apply(first)
        vectors.apply(first)
        again = said.model_copy(
            update={"candidate_id": "f2", "text": "User ran the Boston Marathon again."}
        )
        second = await cascade.resolve(again)
        facts.apply(second)
        return first.decision, second.decision, second.decided_by

    first, second, by = asyncio.run(run())
    assert (first, second, by) == (Decision.ADD, Decision.NOOP, "vector")
    (kept,) = facts.current("u")
    assert kept.verification_count == 1 and kept.text == "User ran the Boston Marathon."


def test_an_offline_decision_is_labelled_offline() -> None:
    facts = InMemoryFacts()
    vectors = InMemoryVectors(lambda texts: [[1.0, 0.0] for _ in texts])
    cascade = Cascade(
        SCHEMA,
        facts,
        vectors,
        OfflineSlotMatcher(review_similarity=0.99),
        now=lambda: NOW,
        embedding_model=None,
        matcher_label="offline",
    )
    one = CandidateFact(
        candidate_id="a", subject_id="u", text="User visited Kyoto.", observed_at=THEN
    )
    two = CandidateFact(
        candidate_id="b", subject_id="u", text="User adopted a cat.", observed_at=NOW
    )

    async def run() -> str:
        first = await cascade.resolve(one)
        facts.apply(first)
        vectors.apply(first)
        return (await cascade.resolve(two)).reason

    assert asyncio.run(run()).startswith("offline:")


def test_a_named_zone_restates_the_iana_zone_it_keeps() -> None:
    assert same_zone("Central Time", "America/Chicago")
    assert same_zone("CET", "Europe/Paris")
    assert not same_zone("Asia/Kuala_Lumpur", "Asia/Singapore")  # two cities, one clock
    assert not same_zone("EST", "America/Chicago")
