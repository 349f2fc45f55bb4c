"""Corrections read as a swap of words, and the swap applied to the held fact it names."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slotwise.processors.corrected import corrected
from slotwise.processors.resolve import new_fact
from slotwise.processors.rules.swaps import Swap, read_swap
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Fact

SCHEMA = AttributeSchema.load()
SAID = datetime(2026, 4, 2, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "swap"),
    [
        ("ugh autocorrect, Leipzig not Leiden", Swap("Leiden", "Leipzig")),
        ("sorry i misspoke, keto, not vegan, still no bread", Swap("vegan", "keto")),
        ("not tom, Thom with an h, my typo", Swap("tom", "Thom")),
        ("no wait not acme, globex", Swap("acme", "globex")),
        ("my last two digits are 47 not 74", Swap("74", "47")),
        ("when i said cello i meant viola", Swap("cello", "viola")),
        ("sorry i meant signal not whatsapp", Swap("whatsapp", "signal")),
        (
            "Small correction: my first language is Catalan, not Spanish.",
            Swap("Spanish", "Catalan"),
        ),
    ],
)
def test_the_clear_shapes_of_a_correction_are_read(text: str, swap: Swap) -> None:
    assert read_swap(text) == swap


@pytest.mark.parametrize(
    "text",
    [
        "not remote anymore, back in the office",  # a change, not a swap of words
        "I do not eat meat",
        "I'm not sure, maybe later",
        "Lyon not Lille, and Porto not Braga",  # two swaps: which one is meant?
    ],
)
def test_denials_and_double_swaps_are_no_swap(text: str) -> None:
    assert read_swap(text) is None


def held(attribute: str, value: str) -> Fact:
    candidate = CandidateFact(
        schema="candidate/1",
        candidate_id=f"c-{attribute}",
        subject_id="u-1",
        attribute=attribute,
        value=value,
        text=f"User's {attribute} is {value}.",
        observed_at=SAID,
    )
    return new_fact(candidate, None, now=SAID, embedding_model=None)


LEIDEN = held("home_city", "Leiden")
PHONE = "+447700900174"


def question(text: str) -> CandidateFact:
    swap = read_swap(text)
    assert swap is not None
    return CandidateFact(
        schema="candidate/1",
        candidate_id="q-1",
        subject_id="u-1",
        value=swap.new,
        text=f"User may have corrected or withdrawn something: {text}",
        observed_at=SAID,
        question="corrects something",
    )


@pytest.mark.parametrize(
    ("facts", "text", "slot", "value"),
    [
        ([LEIDEN], "ugh autocorrect, Leipzig not Leiden", "home_city", "Leipzig"),
        ([held("pets", "cat named Tom")], "sorry, it's Thom not Tom", "pets", "cat named Thom"),
        ([held("phone", PHONE)], "typo, last digits are 147 not 174", "phone", "+447700900147"),
        ([held("preferred_contact_method", "whatsapp"), LEIDEN],
         "sorry i meant signal not whatsapp", "preferred_contact_method", "signal"),
        # The new words restate the held words around the old ones: not "product product manager".
        ([held("job_title", "product designer")], "correction: product manager, not designer",
         "job_title", "product manager"),
        ([held("job_title", "senior data engineer")], "i meant staff data engineer not senior",
         "job_title", "staff data engineer"),
        ([held("job_title", "data engineer")], "analyst, not engineer",
         "job_title", "data analyst"),
        # Said without its apostrophe, the held name is still named.
        ([held("employer", "McDonald's")], "sorry, not mcdonalds, burger king",
         "employer", "burger king"),
        # A whole address for a part of the held one: the address as said, nothing doubled.
        ([held("email", "kim.lee@proton.me")], "typo, it's kim.li@proton.me not kim.lee",
         "email", "kim.li@proton.me"),
    ],
)  # fmt: skip
def test_a_swap_replaces_the_old_words_in_the_one_fact_they_name(
    facts: list[Fact], text: str, slot: str, value: str
) -> None:
    found = corrected(question(text), facts, SCHEMA)
    assert found is not None and (found.held.attribute, found.value) == (slot, value)


@pytest.mark.parametrize(
    ("facts", "text"),
    [
        ([LEIDEN], "sorry, Tuesday not Thursday for the call"),  # names none
        ([held("home_city", "Cambridge")], "oops, Cambridge MA not Cambridge UK"),  # detail only
        ([held("home_city", "Paris"), held("current_location", "Paris")], "typo: Lyon not Paris"),
    ],
)
def test_a_swap_that_names_no_one_fact_or_only_adds_detail_is_not_applied(
    facts: list[Fact], text: str
) -> None:
    assert corrected(question(text), facts, SCHEMA) is None


def test_a_swap_in_a_many_valued_slot_is_marked_for_a_human() -> None:
    found = corrected(
        question("when i said cello i meant viola"), [held("hobbies", "cello")], SCHEMA
    )
    assert found is not None and found.many and found.value == "viola"
