"""Moves and job changes told through what follows from them, and run-ons that carry one.

Each pattern is probed with several phrasings (lower case, chat, a little Spanish and
Portuguese) and with the look-alikes its guards must refuse: someone else's, a former
one, a plan, a place the gazetteer does not know, a common noun where a company goes.
"""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn
from slotwise.topics.records import CandidateFact

SCHEMA = AttributeSchema.load()


def facts(text: str) -> list[CandidateFact]:
    return read_turn(text, SCHEMA)


def slotted(text: str, *attributes: str) -> set[tuple[str | None, object]]:
    return {(c.attribute, c.value) for c in facts(text) if c.attribute in attributes}


HOME = ("home_city", "home_country")


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("new landlord in glasgow is a nightmare", "Glasgow"),
        ("my new landlord in Glasgow keeps texting me", "Glasgow"),
        ("the landlord in aarhus finally fixed our heating, only took him 3 weeks", "Aarhus"),
        ("our new neighbourhood in lisbon is so loud", "Lisbon"),
        ("my neighbours in leeds are lovely", "Leeds"),
        ("my commute from porto is brutal", "Porto"),
        ("commute from our new place in porto is a breeze, 15 min on the bike", "Porto"),
        ("just moved into a tiny flat in valencia", "Valencia"),
        ("moved into our new place in Denver last week", "Denver"),
        ("moved in two weeks ago and the new place in porto still smells like paint", "Porto"),
        ("First month in our Warsaw flat done, and the tram takes twelve minutes.", "Warsaw"),
        ("renting a flat in bristol now", "Bristol"),
        ("moro em são paulo agora", "São Paulo"),
        ("vivimos en rosario", "Rosario"),
    ],
)
def test_a_home_told_by_what_only_a_resident_has(text: str, city: str) -> None:
    assert slotted(text, *HOME) == {("home_city", city)}


@pytest.mark.parametrize(
    "text",
    [
        "my old landlord in leeds was awful",  # a former home
        "my sister's landlord in leeds is awful",  # someone else's
        "her new neighbourhood in lisbon is loud",
        "looking at a flat in bristol",  # a plan
        "thinking about renting a flat in bristol",
        "just bought a house in cork",  # bought, not yet moved
        "bought a house in cork for my parents",
        "back in my old flat in rome for a week",
        "staying in my friend's flat in paris",
        "in our tiny flat",  # no place
        "is the landlord in leeds nice?",  # a question
        "my commute to the office in leeds is 10 minutes",  # the office's town, not home
    ],
)
def test_a_consequence_that_is_no_home(text: str) -> None:
    assert slotted(text, *HOME) == set()


def test_a_new_landlord_states_the_change() -> None:
    [home] = [c for c in facts("new landlord in glasgow is a nightmare") if c.attribute]
    assert home.stated_change


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("anyway since the move to sheffield the commute is killing me", "Sheffield"),
        ("Since moving to Boulder I can't find a decent bagel anywhere.", "Boulder"),
        ("since our move to leeds i sleep so much better", "Leeds"),
    ],
)
def test_a_move_counted_from_is_done(text: str, city: str) -> None:
    assert slotted(text, *HOME) == {("home_city", city)}


def test_a_move_still_to_come_is_no_home() -> None:
    assert slotted("after the move to denver next month i'll get a dog", *HOME) == set()


@pytest.mark.parametrize(
    ("text", "org"),
    [
        ("my new manager at stripe is great", "Stripe"),
        ("my new role at atlassian is wild", "Atlassian"),
        ("my new job at Canva starts monday", "Canva"),
        ("our new team at Monzo is tiny", "Monzo"),
        ("first week at monzo done", "Monzo"),
        ("second month with Deliveroo and still loving it", "Deliveroo"),
        (
            "ugh first week at the new place and my new manager at accenture already booked "
            "three 1:1s with me",
            "Accenture",
        ),
        ("starting at shopify monday", "Shopify"),
        ("last day at ibm tomorrow, starting at shopify monday", "Shopify"),
        ("trabajo en telefónica", "Telefónica"),
    ],
)
def test_a_job_told_by_what_only_an_employee_has(text: str, org: str) -> None:
    assert slotted(text, "employer") == {("employer", org)}


@pytest.mark.parametrize(
    "text",
    [
        "her new manager at stripe is great",  # someone else's
        "my old manager at ibm called",  # a former job
        "my new team at work is nice",  # no company
        "first week at uni done",  # a school, not an employer
        "first week at the gym done",
        "trabajo en madrid",  # a place, not a company
        "would my new manager at stripe mind?",
        "if my new role at atlassian happens",
        "last day at deloitte was friday",  # the old job ends; no new one is named
    ],
)
def test_a_consequence_that_is_no_employer(text: str) -> None:
    assert slotted(text, "employer") == set()


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("moved to valparaíso three weeks ago and still can't find decent bread", "Valparaíso"),
        ("moved to lisbon three weeks ago", "Lisbon"),
        ("I'm based in galway", "Galway"),  # a capital "I" and a lower-case town
        ("i live in leeds now but don't know anyone yet", "Leeds"),
    ],
)
def test_a_change_in_passing_in_a_run_on(text: str, city: str) -> None:
    assert slotted(text, *HOME) == {("home_city", city)}


@pytest.mark.parametrize(
    "text",
    [
        "I live in fear.",  # no place a library knows
        "I live in hope",
        "I moved back in spring",  # a season, though a Texan town is called Spring
        "I'm based in paradise lol",
        "my new landlord in spring was a nightmare",
        "i don't live in leeds and never did",  # the denial is the statement's own
        "not in leeds anymore and not sure where next",
    ],
)
def test_no_home_from_a_denial_or_a_common_word(text: str) -> None:
    assert slotted(text, *HOME) == set()


def test_the_clock_talk_of_my_time_implies_the_new_homes_zone() -> None:
    text = "new landlord in phoenix is super chill. anyway i'm free for calls after 4 my time"
    assert ("timezone", "America/Phoenix") in slotted(text, "timezone")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("onboarding at deliveroo is tomorrow 9am, wish me luck", {("employer", "Deliveroo")}),
        ("my onboarding at Monzo starts monday", {("employer", "Monzo")}),
        ("client onboarding at acme today", set()),  # someone else's onboarding
    ],
)
def test_an_onboarding_is_the_new_job(text: str, expected: set[object]) -> None:
    assert slotted(text, "employer") == expected
