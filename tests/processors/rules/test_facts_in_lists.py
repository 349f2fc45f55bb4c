"""Several facts in one message: bio lines ("33, nurse, two kids, live in cork"), lists
split by slashes, "mum of 3", "Sydney based", a title and where it is worked; and the
look-alikes, someone else's bio or a list of jobs, that state nothing of the speaker's.

Written for the reader before it was run on them, in the ways people type; not taken from
the evaluation data.
"""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()


def facts(text: str) -> set[tuple[str, str]]:
    return {
        (c.attribute, str(c.value).casefold())
        for c in read_turn(text, SCHEMA)
        if c.attribute is not None and c.value is not None
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "33, nurse, two kids, live in cork",
            {("job_title", "nurse"), ("children_count", "2"), ("home_city", "cork")},
        ),
        (
            "mum of 3, teacher, live in bristol",
            {("children_count", "3"), ("job_title", "teacher"), ("home_city", "bristol")},
        ),
        (
            "single, 41, accountant in dublin",
            {
                ("relationship_status", "single"),
                ("job_title", "accountant"),
                ("home_city", "dublin"),
            },
        ),
        (
            "hey, 45, dad of two, electrician, based in cardiff",
            {("children_count", "2"), ("job_title", "electrician"), ("home_city", "cardiff")},
        ),
        (
            "London based, 31, data scientist",
            {("home_city", "london"), ("job_title", "data scientist")},
        ),
        ("mom of 2 / nurse / texas", {("children_count", "2"), ("job_title", "nurse")}),
        ("29, single, paramedic", {("relationship_status", "single"), ("job_title", "paramedic")}),
        (
            "im a pharmacist in leeds, married, one kid",
            {
                ("job_title", "pharmacist"),
                ("home_city", "leeds"),
                ("relationship_status", "married"),
                ("children_count", "1"),
            },
        ),
        (
            "I'm Brazilian, living in Lisbon, working remotely",
            {("nationality", "brazilian"), ("home_city", "lisbon"), ("work_arrangement", "remote")},
        ),
        (
            "I'm a vet in Perth and I swim every morning",
            {("job_title", "vet"), ("home_city", "perth"), ("hobbies", "swimming")},
        ),
        (
            "I cycle most days and I knit on weekends",
            {("hobbies", "cycling"), ("hobbies", "knitting")},
        ),
        ("i bake a lot, sourdough mostly", {("hobbies", "baking")}),
        (
            "one husband, two kids, a dog",
            {("relationship_status", "married"), ("children_count", "2")},
        ),
        (
            "i'm vegan and i work remotely from lisbon",
            {("diet", "vegan"), ("work_arrangement", "remote"), ("home_city", "lisbon")},
        ),
        ("hi i'm tom, i'm a physio and i run a lot", {("job_title", "physiotherapist")}),
        (
            "my email is sara.lind@proton.me and text is best for quick stuff",
            {("email", "sara.lind@proton.me"), ("preferred_contact_method", "text")},
        ),
        ("texting is easiest for me, calls stress me out", {("preferred_contact_method", "text")}),
    ],
)
def test_each_item_of_a_list_is_read(text: str, expected: set[tuple[str, str]]) -> None:
    assert expected <= facts(text)


@pytest.mark.parametrize(
    "text",
    [
        "my brother, 45, dad of two, electrician",  # someone else's bio
        "nurse, electrician, teacher, which pays best",  # a list of jobs to choose from
        "plumber / electrician / carpenter",  # trades, nobody's
        "texting is easiest for my mum",  # how someone else is reached
        "my sister has one husband, two kids, a dog",  # her household, listed
        "my wife works remotely from Leeds",
        "my wife swims every morning",  # someone else's habit
        "29, single, and looking? no thanks lol (that's my friend's dating bio)",
        "plant based, gluten free, dairy free recipes please",  # what a recipe is, not a home
    ],
)
def test_a_list_that_is_not_the_speakers_states_nothing(text: str) -> None:
    assert not facts(text)


def test_a_remote_stint_somewhere_is_no_home() -> None:
    assert facts("i work remotely from bali this month") <= {("work_arrangement", "remote")}
