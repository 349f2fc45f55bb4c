"""The matching cascade over the in-memory ports: which stage decides, and what it writes."""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Collection, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from slotwise.processors.cascade import Cascade
from slotwise.processors.model import Decision, Resolution, SlotAnswer, VectorRow, stable_id
from slotwise.processors.ports import SlotMatcher
from slotwise.processors.resolve import fact_id_for, new_fact
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import OfflineSlotMatcher
from slotwise.processors.testing import InMemoryFacts, InMemoryVectors, ScriptedMatcher
from slotwise.processors.vector_fetch import vector_fetch
from slotwise.topics.records import CandidateFact, Fact

SCHEMA_DOC = {
    "version": "test",
    "attributes": {
        "employer": {"cardinality": "one", "category": "job", "half_life_days": 365},
        "home_city": {"cardinality": "one", "category": "location", "half_life_days": None},
        "hobby": {"cardinality": "many", "category": "interests", "half_life_days": 180},
        "timezone": {"cardinality": "one", "category": "location", "half_life_days": None},
    },
}
NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)
JAN = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SUBJECT = "user-42"


def candidate(
    cid: str,
    text: str,
    attribute: str | None = None,
    value: str | None = None,
    *,
    observed_at: datetime = JAN,
    valid_from: datetime | None = None,
    subject: str = SUBJECT,
) -> CandidateFact:
    return CandidateFact.model_validate(
        {
            "schema": "candidate/1",
            "candidate_id": cid,
            "subject_id": subject,
            "attribute": attribute,
            "value": value,
            "text": text,
            "observed_at": observed_at,
            "valid_from": valid_from,
        }
    )


class Table:
    """An embedding function from a fixed table: each test places its texts by hand."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vectors.get(t, [0.0, 0.0, 1.0]) for t in texts]


def at_cosine(similarity: float) -> list[float]:
    """A vector at ``similarity`` to [1, 0, 0]."""
    return [similarity, math.sqrt(1.0 - similarity * similarity), 0.0]


class World:
    """A store, an index and a cascade wired together; ``write`` resolves and applies."""

    def __init__(self, embed: Table, matcher: SlotMatcher) -> None:
        self.facts = InMemoryFacts()
        self.vectors = InMemoryVectors(embed)
        self.matcher = matcher
        self.cascade = Cascade(
            AttributeSchema.parse(SCHEMA_DOC),
            self.facts,
            self.vectors,
            matcher,
            top_k=5,
            floor=0.3,
            now=lambda: NOW,
            embedding_model="test-embed",
        )

    def decide(self, cand: CandidateFact) -> Resolution:
        return asyncio.run(self.cascade.resolve(cand))

    def write(self, cand: CandidateFact) -> Resolution:
        result = self.decide(cand)
        self.facts.apply(result)
        self.vectors.apply(result)
        return result

    def current(self) -> list[Fact]:
        return self.facts.current(SUBJECT)


LIVES = "User lives in Lisbon."
VISITED = "User visited Lisbon in March."


@pytest.mark.parametrize("similarity", [0.31, 0.71, 0.84, 0.85, 0.89, 0.97, 0.999])
def test_a_visit_never_supersedes_the_home_city_offline(similarity: float) -> None:
    world = World(
        Table({LIVES: [1.0, 0.0, 0.0], VISITED: at_cosine(similarity)}), OfflineSlotMatcher()
    )
    home = world.write(candidate("c1", LIVES, "home_city", "Lisbon"))
    assert home.decision is Decision.ADD and home.decided_by == "exact"
    result = world.write(candidate("c2", VISITED, observed_at=JAN + timedelta(days=60)))
    assert result.decision in (Decision.ADD, Decision.REVIEW)
    assert result.supersessions == ()
    assert {f.text for f in world.current()} == {LIVES, VISITED}  # both truths kept
    if similarity >= 0.85:
        assert result.decision is Decision.REVIEW
        assert result.review is not None and result.review.kind == "close_neighbour"
        assert result.review.incumbent_fact_ids == (home.facts[0].fact_id,)
    else:
        assert result.review is None


def test_a_visit_with_a_model_answering_none_is_added() -> None:
    matcher = ScriptedMatcher(["NONE"])
    world = World(Table({LIVES: [1.0, 0.0, 0.0], VISITED: at_cosine(0.89)}), matcher)
    home = world.write(candidate("c1", LIVES, "home_city", "Lisbon"))
    result = world.write(candidate("c2", VISITED))
    assert result.decision is Decision.ADD
    assert result.decided_by == "llm" and result.reason.startswith("llm:")
    [call] = matcher.calls
    assert [n.fact.fact_id for n in call.neighbours] == [home.facts[0].fact_id]
    assert call.neighbours[0].similarity == pytest.approx(0.89)
    assert len(world.current()) == 2


def test_exact_path_decides_alone_datadog_then_stripe() -> None:
    matcher = ScriptedMatcher([])
    world = World(Table({}), matcher)
    old = world.write(
        candidate("c1", "User is a backend engineer at Datadog.", "employer", "Datadog")
    )
    monday = datetime(2026, 3, 16, tzinfo=UTC)
    result = world.write(
        candidate(
            "c2",
            "I start at Stripe on Monday",
            "employer",
            "Stripe",
            observed_at=datetime(2026, 3, 14, 10, tzinfo=UTC),
            valid_from=monday,
        )
    )
    assert result.decision is Decision.SUPERSEDE
    assert result.decided_by == "exact" and result.reason.startswith("exact:")
    assert matcher.calls == [] and world.vectors.queried_subjects == []
    [current] = world.current()
    assert current.value == "Stripe" and current.valid_from == monday
    retired = world.facts.facts[old.facts[0].fact_id]
    assert retired.status == "superseded" and retired.valid_to == monday
    assert [e.new_fact_id for e in world.facts.supersessions] == [current.fact_id]


COFFEE_OLD = "User's favourite coffee shop is Fabrica."
COFFEE_NEW = "User's favourite coffee shop is now Copenhagen Coffee Lab."


def coffee_world(matcher: ScriptedMatcher) -> tuple[World, Fact]:
    world = World(Table({COFFEE_OLD: [1.0, 0.0, 0.0], COFFEE_NEW: at_cosine(0.8)}), matcher)
    first = world.write(candidate("c1", COFFEE_OLD))
    assert first.decision is Decision.ADD and first.decided_by == "vector"
    assert matcher.calls == []  # no neighbours: no model call
    return world, first.facts[0]


def test_free_text_pair_matched_by_the_model_supersedes() -> None:
    matcher = ScriptedMatcher(["1"])
    world, old = coffee_world(matcher)
    result = world.write(candidate("c2", COFFEE_NEW, observed_at=JAN + timedelta(days=5)))
    assert result.decision is Decision.SUPERSEDE
    assert result.decided_by == "llm"
    [event] = result.supersessions
    assert event.decided_by == "llm" and event.old_fact_id == old.fact_id
    [current] = world.current()
    assert current.text == COFFEE_NEW and current.supersedes == old.fact_id
    assert world.facts.facts[old.fact_id].status == "superseded"


@pytest.mark.parametrize(
    "reply",
    [
        "2",  # a number not on the list
        "0",
        "Memory 1 is about coffee too, so probably 1.",  # prose
        stable_id("fact", "someone-elses-candidate"),  # an id, as models invent them
        "fact-7f3a",
        "",
    ],
)
def test_a_rejected_model_answer_changes_nothing(reply: str) -> None:
    matcher = ScriptedMatcher([reply])
    world, old = coffee_world(matcher)
    result = world.write(candidate("c2", COFFEE_NEW, observed_at=JAN + timedelta(days=5)))
    assert result.decision is Decision.ADD
    assert matcher.rejected == 1
    assert result.supersessions == ()
    assert world.facts.facts[old.fact_id].status == "current"
    assert len(world.current()) == 2


def test_an_index_off_the_list_from_an_adapter_changes_nothing() -> None:
    world, old = coffee_world(ScriptedMatcher([SlotAnswer(index=4, raw="5")]))
    result = world.write(candidate("c2", COFFEE_NEW))
    assert result.decision is Decision.ADD and result.supersessions == ()
    assert world.facts.facts[old.fact_id].status == "current"


def test_a_model_failure_goes_to_review_and_writes_nothing() -> None:
    world, old = coffee_world(ScriptedMatcher([SlotAnswer(index=None, error="529 overloaded")]))
    result = world.write(candidate("c2", COFFEE_NEW))
    assert result.decision is Decision.REVIEW
    assert result.facts == () and result.vector_rows == () and result.supersessions == ()
    assert result.review is not None and result.review.kind == "model_failure"
    assert "529 overloaded" in result.review.reason
    assert result.review.incumbent_fact_ids == (old.fact_id,)
    assert [f.fact_id for f in world.current()] == [old.fact_id]


def test_a_model_match_into_a_many_valued_slot_adds() -> None:
    climbing, running = "User goes climbing.", "User goes running on Sundays."
    world = World(
        Table({climbing: [1.0, 0.0, 0.0], running: at_cosine(0.7)}), ScriptedMatcher(["1"])
    )
    world.write(candidate("c1", climbing, "hobby", "climbing"))
    result = world.write(candidate("c2", running))
    assert result.decision is Decision.ADD
    assert result.facts[0].attribute == "hobby"  # it joined the matched slot
    assert len(world.current()) == 2


def test_other_subjects_never_reach_the_matcher() -> None:
    matcher = ScriptedMatcher(["NONE"])
    world = World(Table({COFFEE_OLD: [1.0, 0.0, 0.0], COFFEE_NEW: at_cosine(0.95)}), matcher)
    world.write(candidate("x1", COFFEE_OLD, subject="user-7"))
    result = world.write(candidate("c2", COFFEE_NEW))
    assert result.decision is Decision.ADD and result.decided_by == "vector"
    assert matcher.calls == []
    assert world.vectors.queried_subjects == ["user-7", SUBJECT]


def test_superseded_facts_in_the_index_are_not_neighbours() -> None:
    again = "User's favourite coffee shop is Fabrica again."
    matcher = ScriptedMatcher(["1", "NONE"])
    table = Table({COFFEE_OLD: [1.0, 0.0, 0.0], COFFEE_NEW: at_cosine(0.8), again: [1.0, 0.0, 0.0]})
    world = World(table, matcher)
    [old] = world.write(candidate("c1", COFFEE_OLD)).facts
    world.write(candidate("c2", COFFEE_NEW, observed_at=JAN + timedelta(days=5)))
    world.decide(candidate("c3", again))  # the index still holds the superseded row
    assert world.cascade.dropped["not_current"] == 1
    shown = matcher.calls[-1].neighbours
    assert [n.fact.text for n in shown] == [COFFEE_NEW]
    assert old.fact_id not in {n.fact.fact_id for n in shown}


def test_replaying_a_candidate_against_the_same_state_is_identical() -> None:
    world, _ = coffee_world(ScriptedMatcher(["1", "1"]))
    cand = candidate("c2", COFFEE_NEW, observed_at=JAN + timedelta(days=5))
    assert world.decide(cand) == world.decide(cand)


def test_a_redelivered_candidate_writes_nothing_even_after_its_fact_was_retired() -> None:
    matcher = ScriptedMatcher(["1"])
    world, old = coffee_world(matcher)
    first = candidate("c1", COFFEE_OLD)
    world.write(candidate("c2", COFFEE_NEW, observed_at=JAN + timedelta(days=5)))
    before = dict(world.facts.facts)
    queries = len(world.vectors.queried_subjects)
    replay = world.write(first)
    assert replay.decision is Decision.NOOP and replay.decided_by == "replay"
    assert replay.facts == () and replay.supersessions == () and replay.vector_rows == ()
    assert world.facts.facts == before
    assert world.facts.facts[old.fact_id].status == "superseded"
    assert len(world.vectors.queried_subjects) == queries and len(matcher.calls) == 1


class RogueSearch:
    """An index that ignores the subject filter."""

    def __init__(self, hits: list[tuple[str, float]]) -> None:
        self.hits = hits

    async def nearest(
        self,
        subject_id: str,
        text: str,
        *,
        k: int,
        floor: float,
        exclude: Collection[str] = (),
    ) -> list[tuple[str, float]]:
        return self.hits


class CarelessReader(InMemoryFacts):
    """A reader that ignores the subject when hydrating."""

    async def get_facts(self, subject_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        return [self.facts[i] for i in fact_ids if i in self.facts]


def test_vector_fetch_drops_and_counts_what_is_not_a_current_fact_of_the_subject() -> None:
    _, mine = coffee_world(ScriptedMatcher([]))
    theirs = World(Table({}), ScriptedMatcher([]))
    [foreign] = theirs.write(candidate("x1", "Likes tea.", subject="user-7")).facts
    reader = CarelessReader([mine, foreign])
    own = fact_id_for(candidate("c9", COFFEE_NEW))
    search = RogueSearch(
        [
            (foreign.fact_id, 0.99),  # another subject's row
            (own, 0.97),  # a replay finding its own row
            ("ghost", 0.9),  # in the index, not in the store
            (mine.fact_id, 0.5),
            (mine.fact_id, 0.5),  # duplicate hit
            ("too-far", 0.1),  # under the floor
        ]
    )
    dropped: Counter[str] = Counter()
    found = asyncio.run(
        vector_fetch(search, reader, candidate("c9", COFFEE_NEW), k=5, floor=0.3, dropped=dropped)
    )
    assert [n.fact.fact_id for n in found] == [mine.fact_id]
    assert found[0].similarity == 0.5
    assert dropped == Counter({"other_subject": 1, "unknown": 1, "excluded": 1})


def test_vector_fetch_honours_extra_exclusions_and_k() -> None:
    world, mine = coffee_world(ScriptedMatcher([]))
    search = RogueSearch([(mine.fact_id, 0.9)])
    found = asyncio.run(
        vector_fetch(
            search, world.facts, candidate("c9", COFFEE_NEW), k=5, floor=0.3, exclude={mine.fact_id}
        )
    )
    assert found == []


def test_a_chained_timeline_on_the_exact_path() -> None:
    world = World(Table({}), ScriptedMatcher([]))
    feb, mar = JAN + timedelta(days=30), JAN + timedelta(days=60)
    world.write(candidate("c1", "User works at Datadog.", "employer", "Datadog"))
    again = world.write(
        candidate("c2", "User works at Datadog", "employer", "datadog", observed_at=feb)
    )
    assert again.decision is Decision.NOOP
    stripe = world.write(
        candidate("c3", "User works at Stripe.", "employer", "Stripe", observed_at=mar)
    )
    assert stripe.decision is Decision.SUPERSEDE
    late = world.write(
        candidate("c4", "User worked at Initech.", "employer", "Initech", observed_at=feb)
    )
    assert late.decision is Decision.ADD and late.facts[0].status == "history"
    world.write(candidate("c5", "User climbs.", "hobby", "climbing"))
    world.write(candidate("c6", "User runs.", "hobby", "running"))
    current = {(f.attribute, f.value) for f in world.current()}
    assert current == {("employer", "Stripe"), ("hobby", "climbing"), ("hobby", "running")}
    datadog = world.facts.facts[stripe.facts[0].supersedes or ""]
    assert (datadog.verification_count, datadog.last_verified) == (1, feb)
    assert (datadog.status, datadog.valid_to) == ("superseded", mar)
    assert len(world.facts.supersessions) == 1 and world.facts.reviews == []


def test_rows_a_lost_write_left_in_the_index_take_no_place_among_the_neighbours() -> None:
    # After a failover to a replica short of some writes, the index still holds their
    # rows until the replay writes them again; the replay must rank as the first run did.
    texts = {f"User likes sport {i}.": at_cosine(0.9 - i / 100) for i in range(8)}
    ghosts = {f"User once said {i}.": at_cosine(0.99 - i / 1000) for i in range(40)}
    query = candidate("c9", "User likes a sport.")
    table = Table({**texts, **ghosts, query.text: at_cosine(1.0)})
    facts, vectors = InMemoryFacts(), InMemoryVectors(table)
    for i, text in enumerate(texts):
        fact = new_fact(candidate(f"c{i}", text), None, now=JAN, embedding_model="m")
        facts.put(fact)
        vectors.add([VectorRow(fact.fact_id, SUBJECT, text, None)])
    clean = asyncio.run(vector_fetch(vectors, facts, query, k=5, floor=0.3))
    vectors.add(VectorRow(f"lost-{i}", SUBJECT, text, None) for i, text in enumerate(ghosts))
    dropped: Counter[str] = Counter()
    after = asyncio.run(vector_fetch(vectors, facts, query, k=5, floor=0.3, dropped=dropped))
    assert len(clean) == 5
    assert after == clean
    assert dropped == Counter()  # each search excluded what the one before found unknown


def test_a_question_about_a_held_slot_opens_a_review_and_writes_nothing() -> None:
    matcher = ScriptedMatcher([])
    world = World(Table({}), matcher)
    home = world.write(candidate("c1", LIVES, "home_city", "Lisbon"))
    unsure = candidate("c2", "User may have moved.", "home_city").model_copy(
        update={"question": "home_city may have changed; new value not read"}
    )
    result = world.write(unsure)
    assert result.decision is Decision.REVIEW and result.facts == () and result.supersessions == ()
    assert result.review is not None and result.review.kind == "ambiguous"
    assert result.review.incumbent_fact_ids == (home.facts[0].fact_id,)
    assert [f.text for f in world.current()] == [LIVES] and matcher.calls == []


def test_a_question_about_an_empty_slot_asks_nobody() -> None:
    world = World(Table({}), ScriptedMatcher([]))
    unsure = candidate("c1", "User may have moved.", "home_city").model_copy(
        update={"question": "home_city may have changed; new value not read"}
    )
    result = world.write(unsure)
    assert result.decision is Decision.NOOP and result.review is None and world.current() == []


def test_a_deletion_question_is_always_asked_and_erases_nothing() -> None:
    world = World(Table({}), ScriptedMatcher([]))
    world.write(candidate("c1", LIVES, "home_city", "Lisbon"))
    asked = candidate("c2", "User asked to forget something: 'forget what I said'").model_copy(
        update={"question": "deletion request whose scope cannot be read", "category": "erasure"}
    )
    result = world.write(asked)
    assert result.decision is Decision.REVIEW and result.facts == ()
    assert result.review is not None and result.review.incumbent_fact_ids == ()
    assert [f.text for f in world.current()] == [LIVES]


def moved(cid: str, zone: str) -> CandidateFact:
    """The reader's question after a move: the new city's zone, implied and tentative."""
    return candidate(
        cid, "User may have changed their timezone: moved", "timezone", zone
    ).model_copy(update={"question": "a move; the new city keeps another zone"})


def test_a_move_supersedes_a_held_region_zone_with_the_one_it_implies() -> None:
    world = World(Table({}), ScriptedMatcher([]))
    world.write(candidate("c1", "User's timezone is Europe/London.", "timezone", "Europe/London"))
    result = world.write(moved("c2", "America/Toronto"))
    assert result.decision is Decision.SUPERSEDE and result.review is None
    assert [f.value for f in world.current()] == ["America/Toronto"]


def test_a_move_within_the_held_zone_only_confirms_it() -> None:
    world = World(Table({}), ScriptedMatcher([]))
    world.write(candidate("c1", "User's timezone is Europe/Paris.", "timezone", "Europe/Paris"))
    result = world.write(moved("c2", "Europe/Paris"))
    assert result.decision is Decision.NOOP and result.review is None
    assert [f.value for f in world.current()] == ["Europe/Paris"]


@pytest.mark.parametrize("held", ["CET", "UTC+2", "Pacific Time"])
def test_a_move_against_a_zone_held_as_written_is_asked(held: str) -> None:
    # An abbreviation or an offset is kept as the user wrote it; comparing it with a
    # city's zone would be a guess.
    world = World(Table({}), ScriptedMatcher([]))
    world.write(candidate("c1", f"User's timezone is {held}.", "timezone", held))
    result = world.write(moved("c2", "Europe/Berlin"))
    assert result.decision is Decision.REVIEW and result.facts == ()
    assert [f.value for f in world.current()] == [held]


def swap_question(cid: str, said: str, new: str) -> CandidateFact:
    """The reader's question for a correction it read as a swap of words."""
    text = f"User may have corrected or withdrawn something: {said}"
    return candidate(cid, text, None, new).model_copy(update={"question": "corrects something"})


def test_a_correction_read_as_a_swap_supersedes_the_fact_it_names() -> None:
    world = World(Table({}), ScriptedMatcher([]))
    world.write(candidate("c1", "User lives in Leiden.", "home_city", "Leiden"))
    result = world.write(swap_question("c2", "ugh autocorrect, Leipzig not Leiden", "Leipzig"))
    assert result.decision is Decision.SUPERSEDE and result.review is None
    assert [(f.attribute, f.value) for f in world.current()] == [("home_city", "Leipzig")]


def test_a_swap_in_a_many_valued_slot_is_asked_about_that_fact() -> None:
    world = World(Table({}), ScriptedMatcher([]))
    cello = world.write(candidate("c1", "User plays cello.", "hobby", "cello"))
    result = world.write(swap_question("c2", "when i said cello i meant viola", "viola"))
    assert result.decision is Decision.REVIEW and result.facts == ()
    assert result.review is not None
    assert result.review.incumbent_fact_ids == (cello.facts[0].fact_id,)


def test_a_correction_without_a_slot_is_asked_about_the_held_value_it_names() -> None:
    world = World(Table({}), ScriptedMatcher([]))
    home = world.write(candidate("c1", LIVES, "home_city", "Lisbon"))
    probe = "User may have corrected or withdrawn something: {}"
    named = candidate("c2", probe.format("ugh autocorrect, lisbon not lisburn")).model_copy(
        update={"question": "corrects something"}
    )
    result = world.write(named)
    assert result.decision is Decision.REVIEW and result.facts == ()
    assert result.review is not None
    assert result.review.incumbent_fact_ids == (home.facts[0].fact_id,)
    unnamed = candidate("c3", probe.format("not sure about the tuesday call")).model_copy(
        update={"question": "corrects something"}
    )
    assert world.write(unnamed).decision is Decision.NOOP
    assert [f.text for f in world.current()] == [LIVES]
