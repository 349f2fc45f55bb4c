"""A move told through the clock, a goodbye, or what follows from it; a job told through
its first weeks.

These probes were written down, with their expected reading, before the reader ran on
them. A city said with "now" while the speaker is hours ahead of or behind the people
they left is a home, and its zone follows; so is a city greeted or praised in a turn that
leaves another for good ("bye paris, hello lyon"). The look-alikes are trips, a time zone
named for a meeting, someone else's city or job, and an itinerary.
"""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()


def said(text: str) -> set[tuple[str | None, object]]:
    """The slots and values the turn gives, a move's tentative zone included."""
    return {(c.attribute, c.value) for c in read_turn(text, SCHEMA, ask=True)}


def values(text: str) -> set[tuple[str | None, object]]:
    """The slots and values the turn states (questions left out)."""
    return {(c.attribute, c.value) for c in read_turn(text, SCHEMA) if c.question is None}


@pytest.mark.parametrize(
    ("text", "city", "zone"),
    [
        ("denver now! an hour behind the old crew", "Denver", "America/Denver"),
        ("denver now! one hour ahead of the sf office", "Denver", "America/Denver"),
        (
            "melbourne now, 11 hours ahead of mum which makes calls hard",
            "Melbourne",
            "Australia/Melbourne",
        ),
        ("perth since march, 3 hours behind everyone back east", "Perth", "Australia/Perth"),
        ("our new flat in dubai has a pool 😎", "Dubai", "Asia/Dubai"),
        ("bye paris, hello lyon ✌️", "Lyon", "Europe/Paris"),
        ("goodbye liverpool, hello glasgow 🏴", "Glasgow", "Europe/London"),
        ("we finally left lyon, marseille has been great so far", "Marseille", "Europe/Paris"),
        ("we left tokyo for good, osaka has been lovely", "Osaka", "Asia/Tokyo"),
        ("our new neighbours in cambridge brought cake", "Cambridge", "Europe/London"),
    ],
)
def test_a_move_told_by_the_clock_or_a_goodbye(text: str, city: str, zone: str) -> None:
    assert {("home_city", city), ("timezone", zone)} <= said(text)


@pytest.mark.parametrize(
    ("text", "zone"),
    [
        ("switched my clocks to CET since moving", "CET"),
        ("changed my timezone to UTC+3 since moving", "UTC+3"),
        ("my timezone is PST now since the move to LA", "PST"),
        ("switched my clock to mountain time, moved to boise", "Mountain Time"),
    ],
)
def test_a_zone_the_speaker_set_their_clocks_to(text: str, zone: str) -> None:
    assert ("timezone", zone) in values(text)


@pytest.mark.parametrize(
    ("text", "employer"),
    [
        ("two weeks into the new job at Aldi and my feet hurt", "Aldi"),
        ("week one at Deloitte done, so many acronyms", "Deloitte"),
        ("week two at Shopify, the slack channels are endless", "Shopify"),
        ("since joining EY i've barely slept", "EY"),
        ("new job at apple started monday", "Apple"),
    ],
)
def test_a_job_counted_from_its_first_weeks(text: str, employer: str) -> None:
    assert ("employer", employer) in values(text)


@pytest.mark.parametrize(
    "text",
    [
        "in Tokyo for a conference till friday, the jet lag is brutal",
        "can we do 3pm CET for the call?",
        "it's 3am in sydney for my brother lol",
        "our client is in singapore so i'm up early",
        "the meeting is at 9am pacific, which is brutal for me",
        "what time is it in tokyo right now?",
        "the new york office is 6 hours behind us",
        "my team is 5 hours behind in new york",
        "heading to london tomorrow, so I'll be 8 hours ahead for a week",
        "tokyo now, 9 hours ahead, flying back sunday",
        "paris now, rome tomorrow, 6 hours ahead of home",
        "london is 5 hours ahead of us, remember for the call",
        "the team in new york is 6 hours behind so mornings are quiet",
    ],
)
def test_a_clock_for_a_trip_or_a_meeting_is_no_zone(text: str) -> None:
    assert not {a for a, _ in values(text)} & {"timezone", "home_city"}


@pytest.mark.parametrize(
    "text",
    [
        "bye london, see you in two weeks",
        "bye boston, hello summer holiday in maine!",
        "we finally left the party, edinburgh is lovely at night",
        "the new flat in dallas is my daughter's, we helped her move",
        "my brother's new flat in york is huge",
        "our old neighbours in dallas sent a card",
        "my daughter's commute from bergen is long",
        "our landlord lives in edinburgh, never see him",
        "would love to live in portland someday",
        "landed in lisbon for the weekend 🇵🇹",
    ],
)
def test_no_home_from_a_farewell_for_a_while_or_someone_elses_place(text: str) -> None:
    assert "home_city" not in {a for a, _ in values(text)}


@pytest.mark.parametrize(
    "text",
    [
        "my brother's new job at google starts next week",
        "my friend's first week at anthropic went well",
        "my old manager at paypal texted me",
        "first week at the gym done, legs destroyed",
    ],
)
def test_no_employer_from_someone_elses_first_weeks(text: str) -> None:
    assert "employer" not in {a for a, _ in values(text)}
