"""Changes told with a relative date, and changes dated ahead that are not true yet.

These probes were written down, with their expected reading, before the reader ran on
them: a change dated in passing ("three weeks ago", "since the reorg in feb", "as of last
week") reads its slot and value as if undated; a change dated a week, a month or a year
ahead ("next month", "as of next week", "from april") is a plan, never a value. The
look-alikes are someone else's change, a past state, a plan, a hypothetical.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slotwise.processors.dates import find_date
from slotwise.processors.rules.undated import undated
from slotwise.processors.rules.validity import not_yet
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import SAID, read_turn
from slotwise.topics.records import Observation

SCHEMA = AttributeSchema.load()


def values(text: str) -> set[tuple[str | None, object]]:
    """The slots and values the turn states (questions left out)."""
    return {(c.attribute, c.value) for c in read_turn(text, SCHEMA) if c.question is None}


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        ("since last month I've been at Stripe", "employer", "Stripe"),
        ("two weeks into the new job at canva and i already love it", "employer", "Canva"),
        ("been in Berlin since the spring", "home_city", "Berlin"),
        ("moved to leeds last month, still unpacking", "home_city", "Leeds"),
        ("got promoted to tech lead three weeks ago", "job_title", "tech lead"),
        ("as of last week I work at Anthropic", "employer", "Anthropic"),
        ("since the reorg in feb i'm on the search team", "team", "search"),
        ("upgraded to pro a couple weeks back", "plan", "Pro"),
        ("i've been at KPMG since january", "employer", "KPMG"),
        ("three months in melbourne now and I love it", "home_city", "Melbourne"),
        ("since april i'm a ward manager", "job_title", "ward manager"),
        ("after 5 years in seattle we moved to portland in march", "home_city", "Portland"),
        ("3 weeks ago i joined Lloyds, still learning the systems", "employer", "Lloyds"),
        ("we've been in sheffield since christmas", "home_city", "Sheffield"),
        ("since january im a product manager", "job_title", "product manager"),
        ("been at Delivery Hero since last summer", "employer", "Delivery Hero"),
        ("nantes since 2023 and not looking back", "home_city", "Nantes"),
        ("tucson since last spring, the heat is the same lol", "home_city", "Tucson"),
        ("got moved to the data team a month ago", "team", "data"),
        ("two years in barcelona now, time flies", "home_city", "Barcelona"),
        ("been with Microsoft since the spring", "employer", "Microsoft"),
        ("galway since the summer, the rain is something else", "home_city", "Galway"),
        ("six months in seattle now and i finally bought an umbrella", "home_city", "Seattle"),
        ("promoted to senior developer last month!!", "job_title", "senior developer"),
        # The old job already over: the next one is under way, however far ahead it starts.
        ("handed in my notice at monzo, starting at wise next month", "employer", "Wise"),
        ("back in the office three days a week now, hybrid life", "work_arrangement", "hybrid"),
    ],
)
def test_a_change_dated_in_passing_reads_its_value(text: str, attribute: str, value: str) -> None:
    assert (attribute, value) in values(text)


@pytest.mark.parametrize(
    ("text", "attribute"),
    [
        ("as of next week I'm full remote", "work_arrangement"),
        ("starting at stripe next month!!", "employer"),
        ("starting at stripe in june, can't wait", "employer"),
        ("from april the whole company goes remote, apparently", "work_arrangement"),
        ("as of next month we're all hybrid apparently", "work_arrangement"),
        ("from september it's york for us", "home_city"),
        ("going vegetarian from next month maybe", "diet"),
        ("moving to leeds in june", "home_city"),
        ("the move to vancouver is on the 1st of next month", "home_city"),
    ],
)
def test_a_change_dated_weeks_ahead_is_no_value_yet(text: str, attribute: str) -> None:
    assert not {a for a, _ in values(text)} & {attribute}


@pytest.mark.parametrize(
    ("text", "attribute"),
    [
        ("in 2019 i was at IBM, different world", "employer"),
        ("we lived in austin until last year", "home_city"),
        ("if i got the job at atlassian i'd move to sydney", "employer"),
        ("my sister's been in munich since the spring", "home_city"),
        ("my husband started at google last week", "employer"),
        ("i was a teacher for ten years before this", "job_title"),
        ("we were in bergen for a week last month, gorgeous", "home_city"),
        ("my parents moved to york last month", "home_city"),
        ("she quit meta two weeks ago", "employer"),
        ("sarah is two weeks into the new job at atlassian", "employer"),
        ("sarah from accounting is leaving for a new job at coinbase", "employer"),
        ("my sister has been in boulder since the spring", "home_city"),
        ("melbourne since 2019 is my cousin's whole personality", "home_city"),
        ("porto since thursday for a wedding", "home_city"),
        ("hamburg since monday for work, hotel is nice", "home_city"),
        ("three weeks in bali now, back home on the 20th", "home_city"),
        ("two months in lisbon now for the project, then back to porto", "home_city"),
        ("Lisbon since the spring, Porto next month", "home_city"),
        ("we lived in milan since 2015 until last year", "home_city"),
        ("since joining the gym i feel great", "employer"),
    ],
)
def test_look_alikes_state_no_value(text: str, attribute: str) -> None:
    assert attribute not in {a for a, _ in values(text)}


def test_the_date_phrase_is_cut_only_when_it_is_behind_us() -> None:
    assert undated("got promoted to tech lead three weeks ago", past=True) == (
        "got promoted to tech lead"
    )
    assert undated("my timezone is PST now since the move to LA", past=False) == (
        "my timezone is PST now"
    )
    # A calendar date is cut only from a clause in the past tense: "in june" may be a plan.
    assert undated("starting at stripe in june", past=False) is None
    assert undated("moved to portland in march", past=True) == "moved to portland"
    assert undated("starting at stripe next month", past=False) is None


@pytest.mark.parametrize(
    ("text", "ahead"),
    [
        ("first day at northwind is tomorrow", False),  # under way
        ("we move on saturday", False),  # a day booked: a change under way
        ("starting next month", True),
        ("full remote as of next week", True),
        ("from april it's remote", True),
        ("since last month", False),
    ],
)
def test_a_state_dated_a_week_or_more_ahead_is_not_yet_true(text: str, ahead: bool) -> None:
    observation = Observation(observation_id="o", subject_id="s", text=text, observed_at=SAID)
    assert not_yet(find_date(text, SAID), observation) is ahead


def test_since_a_weekday_is_the_one_just_gone() -> None:
    # Saturday 14 March 2026: "since thursday" is the 12th, not the 19th.
    mention = find_date("been in kumasi since thursday", SAID)
    assert mention is not None and mention.when == datetime(2026, 3, 12, tzinfo=UTC)
