"""The cascade with the cold tier: a restated archived fact is restored, never duplicated."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from datetime import UTC, datetime

from slotwise.processors.cold_restate import ColdAwareCascade
from slotwise.processors.model import Decision, Resolution, VectorRow
from slotwise.processors.resolve import fact_id_for, new_fact
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import OfflineSlotMatcher
from slotwise.processors.testing import InMemoryFacts, InMemoryVectors
from slotwise.topics.records import CandidateFact, Fact

SCHEMA = AttributeSchema.parse(
    {
        "version": "test",
        "attributes": {
            "employer": {"cardinality": "one", "category": "work", "half_life_days": 730},
            "languages": {"cardinality": "many", "category": "languages", "half_life_days": 3650},
        },
    }
)
JAN = datetime(2026, 1, 5, tzinfo=UTC)
NOW = datetime(2026, 6, 1, tzinfo=UTC)
SUBJECT = "user-7"


def embed(texts: Sequence[str]) -> list[list[float]]:
    # Equal texts, equal vectors; different texts far apart.
    return [[float(hash(t) % 97), float(hash(t) % 89), 1.0] for t in texts]


class Cold:
    """The cold tier over the in-memory store and a second in-memory index."""

    def __init__(self, facts: InMemoryFacts) -> None:
        self.facts = facts
        self.vectors = InMemoryVectors(embed)
        self.searches = 0

    async def archived_in_slot(self, subject_id: str, attribute: str | None) -> list[Fact]:
        return [
            f
            for f in self.facts.facts.values()
            if f.subject_id == subject_id and f.attribute == attribute and f.status == "archived"
        ]

    async def archived_count(self, subject_id: str) -> int:
        return sum(1 for f in self.facts.facts.values() if f.status == "archived")

    async def nearest_archived(
        self, subject_id: str, text: str, *, k: int, floor: float
    ) -> list[tuple[str, float]]:
        self.searches += 1
        return await self.vectors.nearest(subject_id, text, k=k, floor=floor)


def candidate(
    cid: str, text: str, attribute: str | None = None, value: str | None = None
) -> CandidateFact:
    return CandidateFact(
        candidate_id=cid,
        subject_id=SUBJECT,
        attribute=attribute,
        value=value,
        text=text,
        observed_at=NOW,
    )


def archived(cid: str, text: str, attribute: str | None = None, value: str | None = None) -> Fact:
    fact = new_fact(
        CandidateFact(
            candidate_id=cid,
            subject_id=SUBJECT,
            attribute=attribute,
            value=value,
            text=text,
            observed_at=JAN,
        ),
        SCHEMA.get(attribute),
        now=JAN,
        embedding_model="m",
    )
    return fact.model_copy(update={"status": "archived"})


def world(*facts: Fact) -> tuple[ColdAwareCascade, InMemoryFacts, Cold]:
    store = InMemoryFacts(facts)
    cold = Cold(store)
    cold.vectors.add(VectorRow(f.fact_id, f.subject_id, f.text, f.category) for f in facts)
    cascade = ColdAwareCascade(
        SCHEMA,
        store,
        InMemoryVectors(embed),
        OfflineSlotMatcher(0.85),
        now=lambda: NOW,
        embedding_model="m",
        matcher_label="offline",
        cold=cold,
    )
    return cascade, store, cold


def resolve(cascade: ColdAwareCascade, c: CandidateFact) -> Resolution:
    return asyncio.run(cascade.resolve(c))


def test_restating_an_archived_slot_value_is_a_noop_and_a_restore() -> None:
    old = archived("c1", "User works at Stripe.", "employer", "Stripe")
    cascade, _, _ = world(old)
    result = resolve(cascade, candidate("c2", "User works at Stripe.", "employer", "Stripe"))
    assert result.decision is Decision.NOOP
    assert [(f.fact_id, f.status, f.verification_count) for f in result.facts] == [
        (old.fact_id, "archived", 1)
    ]
    assert result.vector_rows == ()
    assert [(c.command, c.fact_id, c.subject_id) for c in result.commands] == [
        ("restore", old.fact_id, SUBJECT)
    ]
    assert result.reason.startswith("cold: ")


def test_a_new_value_supersedes_an_archived_one() -> None:
    old = archived("c1", "User works at Stripe.", "employer", "Stripe")
    cascade, _, _ = world(old)
    result = resolve(cascade, candidate("c2", "User works at Figma.", "employer", "Figma"))
    assert result.decision is Decision.SUPERSEDE
    by_id = {f.fact_id: f for f in result.facts}
    assert by_id[old.fact_id].status == "superseded"
    assert by_id[old.fact_id].superseded_by == fact_id_for(candidate("c2", "x"))
    assert by_id[fact_id_for(candidate("c2", "x"))].status == "current"
    assert [e.old_fact_id for e in result.supersessions] == [old.fact_id]
    assert result.commands == ()
    assert [r.fact_id for r in result.vector_rows] == [fact_id_for(candidate("c2", "x"))]


def test_many_valued_slots_restore_the_same_value_and_add_others() -> None:
    old = archived("c1", "User speaks Portuguese.", "languages", "Portuguese")
    cascade, _, _ = world(old)
    again = resolve(cascade, candidate("c2", "User speaks Portuguese.", "languages", "Portuguese"))
    assert again.decision is Decision.NOOP and len(again.commands) == 1
    other = resolve(cascade, candidate("c3", "User speaks French.", "languages", "French"))
    assert other.decision is Decision.ADD and other.commands == ()
    assert [f.status for f in other.facts] == ["current"]


def test_a_free_text_restatement_of_an_archived_fact_restores_it() -> None:
    old = archived("c1", "User visited Kyoto in March.")
    cascade, _, cold = world(old)
    result = resolve(cascade, candidate("c2", "User visited Kyoto in March."))
    assert result.decision is Decision.NOOP
    assert result.decided_by == "vector"
    assert [f.status for f in result.facts] == ["archived"]
    assert [c.fact_id for c in result.commands] == [old.fact_id]
    assert cold.searches == 1


def test_nothing_archived_costs_no_cold_search() -> None:
    cascade, _, cold = world()
    result = resolve(cascade, candidate("c2", "User visited Kyoto in March."))
    assert result.decision is Decision.ADD and result.commands == ()
    assert cold.searches == 0


def test_restore_commands_are_derived_from_the_candidate() -> None:
    old = archived("c1", "User works at Stripe.", "employer", "Stripe")
    cascade, _, _ = world(old)
    c = candidate("c2", "User works at Stripe.", "employer", "Stripe")
    first, second = resolve(cascade, c), resolve(cascade, c)
    assert first.commands == second.commands  # a replay re-emits the same command id


def test_a_close_current_neighbour_does_not_hide_an_archived_restatement() -> None:
    old = archived("c1", "User visited Kyoto in March.")
    cascade, store, _ = world(old)
    near = new_fact(
        candidate("c0", "User visited Kyoto in April."), None, now=JAN, embedding_model="m"
    )
    store.put(near)

    class Close:
        async def nearest(
            self,
            subject_id: str,
            text: str,
            *,
            k: int,
            floor: float,
            exclude: Collection[str] = (),
        ) -> list[tuple[str, float]]:
            return [(near.fact_id, 0.95)]

    cascade._search = Close()
    result = resolve(cascade, candidate("c2", "User visited Kyoto in March."))
    # The offline matcher would have added it beside a review of the close pair.
    assert result.decision is Decision.NOOP
    assert result.review is None
    assert [c.fact_id for c in result.commands] == [old.fact_id]
