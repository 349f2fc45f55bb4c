"""The offline extractor on changes told in the slot's own words: the new value read from
the slot's vocabulary, the old one set aside, and a move read from the place it goes to."""

from __future__ import annotations

import pytest

from slotwise.processors.rules import gazetteer
from slotwise.processors.rules.changed import read_changed
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn
from slotwise.topics.records import CandidateFact

SCHEMA = AttributeSchema.load()


def read(text: str, *, ask: bool = False) -> list[CandidateFact]:
    return read_turn(text, SCHEMA, ask=ask)


def slots(text: str) -> set[tuple[str | None, object]]:
    return {(c.attribute, c.value) for c in read(text) if c.attribute is not None}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("we're all postgres now, mysql is gone gone", {("database", "PostgreSQL")}),
        ("we ditched mongo, it's sqlite now", {("database", "SQLite")}),
        ("not remote anymore, back in the office mon-fri", {("work_arrangement", "office")}),
        ("they made us go back, so office full time now", {("work_arrangement", "office")}),
        ("not veggie anymore, eating fish again", {("diet", "pescatarian")}),
        ("i'm a german citizen now, had to give up the turkish one", {("nationality", "German")}),
        ("we ditched mysql, all postgres now", {("database", "PostgreSQL")}),
    ],
)
def test_a_change_names_the_new_value_in_the_slots_vocabulary(
    text: str, expected: set[tuple[str, object]]
) -> None:
    assert slots(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The move to Denver is done; the movers left an hour ago.", ("home_city", "Denver")),
        ("moving to kuala lumpur was the best call", ("home_city", "Kuala Lumpur")),
        ("me mudé a París en septiembre", ("home_city", "Paris")),
        ("mudamos pra buenos aires, finally", ("home_city", "Buenos Aires")),
    ],
)
def test_a_move_told_without_its_subject_is_read_from_the_place(
    text: str, expected: tuple[str, str]
) -> None:
    assert expected in slots(text)


@pytest.mark.parametrize(
    "text",
    [
        "we let the pro trial lapse and moved to Basic",  # a plan; also an old town name
        "the meeting moved to Denver now",  # no one's home
        "the move to Denver is next month",  # a move still to come
        "we're moving to lisbon next year",  # a plan
        "ela mudou pra Lisboa",  # someone else's move
        "we moved the standup to Slack now",  # no place
    ],
)
def test_a_move_that_is_not_the_speakers_done_move_is_no_home(text: str) -> None:
    assert not {s for s in slots(text) if s[0] in {"home_city", "home_country", "home_region"}}


@pytest.mark.parametrize(
    "text",
    [
        "the new hire on my team is fully remote now",  # someone else's arrangement
        "my team is hybrid now",  # the team's, not the speaker's
        "my wife is vegan now",  # someone else's diet
        "i cook vegan for my daughter now",  # a meal, not the speaker's diet
        "im not allergic to penicillin after all, the retest was negative",  # a denial
        "it's not peanuts i'm allergic to, it's tree nuts",  # many-valued: a human decides
        "postgres and mongo both, no more mysql",  # two new values
        "we cancelled the Team subscription now",  # the old value only
    ],
)
def test_a_change_without_one_new_value_of_the_speaker_reads_nothing_new(text: str) -> None:
    found = slots(text)
    assert not {s for s in found if s[0] in {"work_arrangement", "diet", "database", "plan"}}
    assert ("allergies", "tree nuts") not in found
    assert ("allergies", "penicillin") not in found


def test_a_slot_another_rule_placed_is_left_alone() -> None:
    clause = Clause("I'm vegan now, not vegetarian", cased=False, tense=None)
    assert read_changed(clause, {"diet"}) == []
    assert [(f.attribute, f.value) for f in read_changed(clause, set())] == [("diet", "vegan")]


def test_a_change_read_from_the_vocabulary_is_no_longer_asked_about() -> None:
    asked = [c for c in read("we're all postgres now, mysql is gone gone", ask=True) if c.question]
    assert asked == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("handed in my notice at deloitte, starting at kpmg in march", ("employer", "Kpmg")),
        ("my last day at shopify was friday, joining stripe next month", ("employer", "Stripe")),
        ("just switched to the annual plan to save a bit", ("billing_cycle", "annual")),
        ("got married in june!", ("relationship_status", "married")),
        ("new flat in glasgow is tiny but i love it", ("home_city", "Glasgow")),
        ("gone fully vegan since january", ("diet", "vegan")),
        ("started on sertraline last month", ("medications", "sertraline")),
        ("they moved me to the payments team", ("team", "payments")),
        ("promoted to staff engineer 🎉", ("job_title", "staff engineer")),
        ("switched our stack from java to kotlin", ("programming_languages", "Kotlin")),
        ("we ditched mongodb for postgres last year", ("database", "PostgreSQL")),
        ("nos mudamos para o porto em janeiro", ("home_city", "Porto")),
        ("me mudé a valencia hace dos meses", ("home_city", "Valencia")),
        ("agora moro em lisboa", ("home_city", "Lisbon")),
    ],
)
def test_a_change_told_in_passing_is_read(text: str, expected: tuple[str, str]) -> None:
    assert expected in slots(text)


def test_a_home_moved_out_of_is_not_the_home() -> None:
    found = slots("finally moved out of london, we're in bristol now")
    assert ("home_city", "London") not in found
    assert ("home_city", "Bristol") in found


@pytest.mark.parametrize(
    "text",
    [
        "we plan to move to lisbon",  # a plan, whatever the word "plan" does elsewhere
        "got moved onto the design systems team this week",  # a team, not a home
    ],
)
def test_no_home_is_read_or_asked_about(text: str) -> None:
    said = read(text, ask=True)
    assert not [c for c in said if c.attribute == "home_city"]


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("We finally left Cape Town, and Durban has been good to us so far.", True),
        ("Yes, I'm still in Tacoma and not going anywhere.", False),  # re-affirmed
        ("sarah from accounting is leaving for a new job at coinbase", False),  # someone else
        ("infra team life, pager went off at 3am again", False),  # no change
    ],
)
def test_a_value_left_behind_is_asked_about(text: str, asks: bool) -> None:
    assert bool([c for c in read(text, ask=True) if c.question]) == asks


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("i don't pay monthly, it's yearly", ("billing_cycle", "annual")),
        ("we don't run sql server, it's all postgres", ("database", "PostgreSQL")),
    ],
)
def test_a_denial_then_its_replacement_reads_the_replacement(
    text: str, expected: tuple[str, str]
) -> None:
    assert expected in slots(text)


@pytest.mark.parametrize(
    "text",
    [
        "not vegan, it's not that simple",  # the replacement is denied too
        "im not allergic to penicillin after all, the retest was negative",  # no replacement
    ],
)
def test_a_denial_without_a_replacement_is_asked_about(text: str) -> None:
    said = read(text, ask=True)
    assert [c for c in said if c.question]
    assert not [c for c in said if c.attribute in {"diet", "allergies"} and not c.question]


def test_a_town_known_by_an_english_word_is_no_city() -> None:
    assert gazetteer.city_by_name("Google") is None  # Topeka's name for a month in 2010
    assert gazetteer.city_by_name("Basic") is None
    town = gazetteer.city_by_name("París")
    assert town is not None and town.name == "Paris"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("i live in manchester now, not leeds", ("home_city", "Manchester")),
        ("i'm freelance now", ("employer", "self-employed")),
        ("we bumped up to the enterprise tier", ("plan", "Enterprise")),
    ],
)
def test_a_trailing_denial_leaves_the_statement_read(text: str, expected: tuple[str, str]) -> None:
    assert expected in slots(text)


def test_the_office_moving_is_not_the_speakers_move() -> None:
    assert not [c for c in read("our office moved to dublin", ask=True) if c.question]
