"""Extraction's answer to a free-text candidate's slot question, checked where it is decided.

It stands in for the slot-match question only while it covers what the question
would show (every current neighbour was considered) and names a current
neighbour of the subject's own; otherwise the question is asked as before.
"""

from __future__ import annotations

from datetime import timedelta

from slotwise.processors.cascade import Cascade
from slotwise.processors.model import Decision, Neighbour
from slotwise.processors.resolve import new_fact
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import extracted_answer
from slotwise.processors.testing import ScriptedMatcher
from slotwise.topics.records import CandidateFact, Fact, IncumbentMatch
from tests.processors.test_cascade import (
    COFFEE_NEW,
    COFFEE_OLD,
    JAN,
    NOW,
    SCHEMA_DOC,
    Table,
    World,
    at_cosine,
    candidate,
)

THIRD = "User's favourite coffee shop is Hello Kristof."


class Counted(World):
    """A world whose cascade reports what became of each extraction's answer."""

    def __init__(self, embed: Table, matcher: ScriptedMatcher) -> None:
        super().__init__(embed, matcher)
        self.outcomes: list[str] = []
        self.cascade = Cascade(
            AttributeSchema.parse(SCHEMA_DOC),
            self.facts,
            self.vectors,
            matcher,
            top_k=5,
            floor=0.3,
            now=lambda: NOW,
            embedding_model="test-embed",
            extracted=self.outcomes.append,
        )


def world(matcher: ScriptedMatcher) -> tuple[Counted, Fact]:
    table = Table({COFFEE_OLD: [1.0, 0.0, 0.0], COFFEE_NEW: at_cosine(0.8), THIRD: at_cosine(0.7)})
    counted = Counted(table, matcher)
    first = counted.write(candidate("c1", COFFEE_OLD))
    assert first.decision is Decision.ADD
    return counted, first.facts[0]


def answered(
    cid: str, text: str, fact_id: str | None, considered: tuple[str, ...], subject: str = "user-42"
) -> CandidateFact:
    return candidate(cid, text, observed_at=JAN + timedelta(days=5), subject=subject).model_copy(
        update={"incumbent_match": IncumbentMatch(fact_id=fact_id, considered=considered)}
    )


def test_a_named_incumbent_supersedes_without_a_slot_question() -> None:
    matcher = ScriptedMatcher([])  # asked at all, it fails the test
    w, old = world(matcher)
    result = w.write(answered("c2", COFFEE_NEW, old.fact_id, (old.fact_id,)))
    assert result.decision is Decision.SUPERSEDE and result.decided_by == "llm"
    [event] = result.supersessions
    assert event.old_fact_id == old.fact_id
    assert [f.text for f in w.current()] == [COFFEE_NEW]
    assert matcher.calls == [] and w.outcomes == ["used"]


def test_none_adds_without_a_slot_question() -> None:
    matcher = ScriptedMatcher([])
    w, old = world(matcher)
    result = w.write(answered("c2", COFFEE_NEW, None, (old.fact_id,)))
    assert result.decision is Decision.ADD and result.decided_by == "llm"
    assert result.reason.startswith("llm: NONE among 1 neighbours")
    assert len(w.current()) == 2 and matcher.calls == [] and w.outcomes == ["used"]


def test_a_neighbour_stored_after_extraction_read_the_store_means_asking() -> None:
    matcher = ScriptedMatcher(["1"])
    w, old = world(matcher)
    # Extraction saw nothing stored (an earlier turn's fact was not applied yet).
    result = w.write(answered("c2", COFFEE_NEW, None, ()))
    assert result.decision is Decision.SUPERSEDE
    [call] = matcher.calls
    assert [n.fact.fact_id for n in call.neighbours] == [old.fact_id]
    assert w.outcomes == ["unseen_neighbour"]


def test_an_incumbent_superseded_since_is_never_acted_on() -> None:
    matcher = ScriptedMatcher(["1", "NONE"])
    w, old = world(matcher)
    newer = w.write(candidate("c2", COFFEE_NEW, observed_at=JAN + timedelta(days=3)))
    assert newer.decision is Decision.SUPERSEDE
    [new_id] = [f.fact_id for f in w.current()]
    # Named the fact the user had before: it is history now, so the question is asked.
    result = w.write(answered("c3", THIRD, old.fact_id, (old.fact_id, new_id)))
    assert len(matcher.calls) == 2
    assert [n.fact.fact_id for n in matcher.calls[1].neighbours] == [new_id]
    assert result.decision is Decision.ADD
    assert w.facts.facts[old.fact_id].status == "superseded"
    assert w.outcomes == ["not_a_neighbour"]


def test_another_subjects_fact_is_never_a_match() -> None:
    matcher = ScriptedMatcher(["NONE"])
    w, old = world(matcher)
    theirs = w.write(candidate("x1", COFFEE_NEW, subject="user-7")).facts[0]
    # Named (and listed as considered) a fact of another subject: it is no neighbour.
    result = w.write(answered("c2", THIRD, theirs.fact_id, (old.fact_id, theirs.fact_id)))
    assert result.decision is Decision.ADD
    assert len(matcher.calls) == 1 and w.outcomes == ["not_a_neighbour"]
    assert w.facts.facts[theirs.fact_id].status == "current"


def test_a_candidate_without_an_answer_is_asked_as_always() -> None:
    fact = new_fact(candidate("c0", COFFEE_OLD), None, now=NOW, embedding_model="m")
    neighbours = [Neighbour(fact=fact, similarity=0.8)]
    assert extracted_answer(candidate("c1", COFFEE_NEW), neighbours) == (None, None)
    both = answered("c1", COFFEE_NEW, fact.fact_id, (fact.fact_id,))
    answer, outcome = extracted_answer(both, neighbours)
    assert outcome == "used" and answer is not None and answer.index == 0
    # With no neighbours nothing is asked at all; the answer is trivially used.
    answer, outcome = extracted_answer(answered("c1", COFFEE_NEW, None, ()), [])
    assert outcome == "used" and answer is not None and answer.index is None
