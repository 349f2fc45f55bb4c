"""Facts said in passing: after "btw", "oh and", "also", "anyway", "by the way", or after a
request with no question mark ("can you fix my cv, I'm a junior developer at Sky"); and
the look-alikes: the question or request alone, someone else's fact, a wish, a plan.

Written for the reader before it was run on them, in the ways people type; not taken from
the evaluation data.
"""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()


def facts(text: str) -> set[tuple[str | None, str]]:
    return {(c.attribute, str(c.value).casefold()) for c in read_turn(text, SCHEMA)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("can you help me plan meals for the week, btw i'm vegetarian", {("diet", "vegetarian")}),
        (
            "need a cover letter for a design role, oh and i'm a graphic designer at ogilvy "
            "right now",
            {("job_title", "graphic designer"), ("employer", "ogilvy")},
        ),
        (
            "long week lol, work was insane and the kids were sick, anyway i live in bath now so "
            "the commute is better",
            {("home_city", "bath")},
        ),
        (
            "I was wondering about travel insurance, I have type 2 diabetes by the way",
            {("medical_conditions", "type 2 diabetes")},
        ),
        (
            "can you suggest a stretching routine, I run most mornings and my hamstrings are tight",
            {("hobbies", "running")},
        ),
        ("any tips for marathon training, I run 3x a week right now", {("hobbies", "running")}),
        ("nice one. btw we're on the free plan for now", {("plan", "free")}),
        ("thanks!! oh and I'm on metformin, forgot to say", {("medications", "metformin")}),
        (
            "can you fix my cv, I'm a junior developer at Sky right now",
            {("job_title", "junior developer"), ("employer", "sky")},
        ),
        ("need gift ideas, by the way I have three kids", {("children_count", "3")}),
        (
            "could you shorten this email, I'm a lawyer so it has to stay formal",
            {("job_title", "lawyer")},
        ),
        (
            "went to a wedding this weekend, also I'm single now so that was fun",
            {("relationship_status", "single")},
        ),
        ("my first language is Greek so bear with me", {("native_language", "greek")}),
    ],
)
def test_a_fact_said_in_passing_is_read(text: str, expected: set[tuple[str, str]]) -> None:
    assert expected <= facts(text)


@pytest.mark.parametrize(
    "text",
    [
        "can you recommend a good running shoe, my sister runs a lot",  # someone else's habit
        "could you plan my meals, btw my husband is vegetarian",  # someone else's diet
        "what wine goes with lamb, also I wish I lived in Porto",  # a wish
        "can you help me, I'm thinking of moving to Leeds",  # a plan
        "I was wondering if I moved to Berlin, would I need a visa",  # a condition
        "should I text or call my landlord",
        "thanks! also my boss just moved to Singapore",
        "anyway my parents are from Lagos",
        "if I were a nurse I'd quit, by the way",
        # A time opening the sentence, not a request: the childhood stays with its story.
        "when i was a kid, my dad and i went fishing at lake tahoe every summer",
        "can you translate this, by the way 'I am a teacher' is the first line",
    ],
)
def test_talk_around_a_request_states_no_fact(text: str) -> None:
    assert not facts(text)
