"""Re-slotting's pure part: which facts are walked, the offline filler, the command."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from slotwise.processors.change import fingerprint
from slotwise.processors.reslot import Fill, RulesFiller, first_person, reslot_command, walkable
from slotwise.processors.review_policy import reslot_key
from slotwise.processors.schema import AttributeSchema
from tests.processors.lifecycle_facts import T0, stored

SCHEMA = AttributeSchema.load()


def test_a_stored_sentence_reads_back_in_the_first_person() -> None:
    assert first_person("User works at Datadog.") == "I work at Datadog."
    assert first_person("User is vegetarian.") == "I am vegetarian."
    assert first_person("User's email is a@b.org.") == "My email is a@b.org."
    assert first_person("User watches films.") == "I watch films."
    assert first_person("Berlin is nice.") == "Berlin is nice."


def test_the_rules_filler_finds_an_attribute_its_rules_know() -> None:
    filler = RulesFiller(SCHEMA)
    spec = SCHEMA.get("employer")
    assert spec is not None
    works = asyncio.run(filler.fill(stored("c-1", "User works at Datadog."), spec))
    assert (works.verdict, works.value) == ("fills", "Datadog")
    other = asyncio.run(filler.fill(stored("c-2", "User visited Lisbon in March."), spec))
    assert other.verdict == "no"


def test_only_current_free_text_facts_not_rejected_are_walked_oldest_first() -> None:
    a = stored("c-a", "User drives a Volvo.", day=5)
    b = stored("c-b", "User drove a Fiat.", day=1)
    keyed = stored("c-k", "User works at Datadog.", attribute="employer", value="Datadog")
    closed = stored("c-x", "User drives a Saab.", status="superseded", superseded_by="q")
    rejected = stored("c-r", "User may buy a Tesla.", day=2)
    walked = walkable([a, b, keyed, closed, rejected], "car", {reslot_key(rejected.fact_id, "car")})
    assert [f.fact_id for f in walked] == [b.fact_id, a.fact_id]


def test_the_command_names_the_fact_and_what_it_was_decided_against() -> None:
    spec = SCHEMA.get("employer")
    assert spec is not None
    fact = stored("c-1", "User works at Datadog.")
    at = T0 + timedelta(days=3)
    command = reslot_command(fact, spec, Fill("fills", "Datadog"), issued_at=at, vocabulary="2")
    again = reslot_command(fact, spec, Fill("fills", "Datadog"), issued_at=at, vocabulary="2")
    assert command.command_id == again.command_id, "a re-run publishes the same command"
    assert command.fact_ids == (fact.fact_id,)
    assert command.params == {
        "fingerprint": fingerprint(fact),
        "ambiguous": False,
        "vocabulary": "2",
    }
    assert command.candidate is not None and command.candidate.attribute == "employer"
