"""The depth-bounded provenance walk, and the cascade guards that use it."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from slotwise.processors.cascade import Cascade
from slotwise.processors.guards import GuardedCascade
from slotwise.processors.model import Decision
from slotwise.processors.provenance import heads, mark_dependents, walk
from slotwise.processors.review_policy import held_keys
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import InMemoryFacts, InMemoryVectors, ScriptedMatcher
from slotwise.topics.records import CandidateFact
from tests.processors.lifecycle_facts import SUBJECT, stored


class Links:
    """An in-memory provenance index built from the facts' ``derived_from``."""

    def __init__(self, facts: InMemoryFacts) -> None:
        self.facts = facts
        self.reads = 0

    async def dependents(
        self, subject_id: str, fact_ids: Sequence[str]
    ) -> Mapping[str, Sequence[str]]:
        self.reads += 1
        everything = list(self.facts.facts.values())
        return {
            source: [f.fact_id for f in everything if source in f.derived_from]
            for source in fact_ids
        }


class NoRejections:
    def __init__(self, keys: frozenset[str] = frozenset()) -> None:
        self.keys = keys

    async def rejected(self, subject_id: str, keys: Sequence[str]) -> frozenset[str]:
        return self.keys & set(keys)


def _chain(length: int) -> tuple[InMemoryFacts, list[str]]:
    """S ← D1 ← D2 ← ... (each derived from the one before)."""
    source = stored("c-src", "User lives in Lisbon.", attribute="home_city", value="Lisbon")
    facts = [source]
    for depth in range(1, length + 1):
        facts.append(stored(f"c-d{depth}", f"Summary {depth}.", derived_from=(facts[-1].fact_id,)))
    return InMemoryFacts(facts), [f.fact_id for f in facts]


def test_the_walk_marks_depth_one_to_three_and_not_beyond() -> None:
    store, ids = _chain(5)
    links = Links(store)
    distances = asyncio.run(walk(links, SUBJECT, [ids[0]], depth=3))
    assert distances == {ids[1]: 1, ids[2]: 2, ids[3]: 3}
    marked = asyncio.run(mark_dependents(links, store, SUBJECT, [ids[0]]))
    assert [f.fact_id for f in marked] == ids[1:4]
    assert all(f.needs_revalidation for f in marked)
    assert links.reads == 3 + 3


def test_a_cycle_ends_the_walk_and_written_facts_are_left_out() -> None:
    a = stored("c-a", "A.", derived_from=("fact-b",))
    b = stored("c-b", "B.", derived_from=(a.fact_id,))
    store = InMemoryFacts([a, b.model_copy(update={"fact_id": "fact-b"})])
    distances = asyncio.run(walk(Links(store), SUBJECT, [a.fact_id], depth=10))
    assert distances == {"fact-b": 1}
    assert (
        asyncio.run(mark_dependents(Links(store), store, SUBJECT, [a.fact_id], written={"fact-b"}))
        == ()
    )


def test_heads_follow_each_source_to_its_current_fact() -> None:
    new = stored("c-n", "User lives in Porto.")
    old = stored("c-o", "User lives in Lisbon.", status="superseded", superseded_by=new.fact_id)
    found = heads({f.fact_id: f for f in (old, new)}, [old.fact_id, new.fact_id])
    assert [f.fact_id for f in found] == [new.fact_id]


def _cascade(store: InMemoryFacts, rejections: NoRejections) -> GuardedCascade:
    schema = AttributeSchema.load()
    vectors = InMemoryVectors(lambda texts: [[1.0, 0.0] for _ in texts])
    inner = Cascade(
        schema, store, vectors, ScriptedMatcher([]), now=lambda: datetime(2026, 5, 1, tzinfo=UTC),
        embedding_model="m",
    )  # fmt: skip
    return GuardedCascade(inner, store, rejections=rejections, dependents=Links(store))


def test_a_write_that_supersedes_a_source_marks_its_dependents_in_the_same_resolution() -> None:
    store, ids = _chain(2)
    moved = CandidateFact(
        candidate_id="c-porto", subject_id=SUBJECT, attribute="home_city", value="Porto",
        text="User lives in Porto.", observed_at=datetime(2026, 4, 1, tzinfo=UTC),
    )  # fmt: skip
    resolution = asyncio.run(_cascade(store, NoRejections()).resolve(moved))
    assert resolution.decision is Decision.SUPERSEDE
    flagged = [f.fact_id for f in resolution.facts if f.needs_revalidation]
    assert flagged == ids[1:3]


def test_a_held_value_a_human_rejected_is_a_noop_not_a_new_review_item() -> None:
    email = stored("c-e", "User's email is a@x.org.", attribute="email", value="a@x.org",
                   category="contact", verification_count=3)  # fmt: skip
    store = InMemoryFacts([email])
    again = CandidateFact(
        candidate_id="c-e2", subject_id=SUBJECT, attribute="email", value="b@y.org",
        text="User's email is b@y.org.", observed_at=datetime(2026, 4, 1, tzinfo=UTC),
    )  # fmt: skip
    asked = asyncio.run(_cascade(store, NoRejections()).resolve(again))
    assert asked.decision is Decision.REVIEW
    keys = frozenset(held_keys(again, (email.fact_id,)))
    remembered = asyncio.run(_cascade(store, NoRejections(keys)).resolve(again))
    assert remembered.decision is Decision.NOOP and remembered.review is None
    assert remembered.facts == ()
