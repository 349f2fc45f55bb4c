"""Re-slotting, the pure part: when the vocabulary grows, which free-text facts fill it.

As “A contradiction is only visible when memories share a key” puts it: adding
an attribute is cheap; backfilling the free-text facts that
already hold it is the expensive part (a model call per fact, and a person
for the ambiguous share). A re-slotting pass walks the subject's current
free-text facts, asks a :class:`SlotFiller` whether each states the new
attribute, and turns every answer into a ``reslot`` command:

* **fills** — the command carries the schematized candidate (the fact's own
  words, the attribute and the value); applied, the fact moves into the slot
  in place, by the policy against what the slot already holds
  (:func:`slotwise.processors.pairs.place`);
* **ambiguous** — the command asks for a review item; a human accepts (with
  the proposed value), edits (with theirs) or rejects;
* **no** — nothing is published.

Each command names the fact and carries its fingerprint: a fact that changed
before the command's place in the log (superseded, erased, moved) is dropped.

Offline (no model), :class:`RulesFiller` reads the fact with the rules
extractor, in the first person it was said in. It can fill only attributes
the rules know, so a vocabulary that adds an attribute needs a model, or rules
shipped with it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from slotwise.processors.change import fingerprint
from slotwise.processors.model import stable_id
from slotwise.processors.review_policy import reslot_key
from slotwise.processors.rules import extract_candidates
from slotwise.processors.schema import AttributeSchema, AttributeSpec
from slotwise.topics.records import CandidateFact, Command, Fact, Observation, Scalar

__all__ = [
    "Fill",
    "RulesFiller",
    "SlotFiller",
    "first_person",
    "reslot_command",
    "reslot_review_id",
    "walkable",
]

FillVerdict = Literal["fills", "no", "ambiguous"]


@dataclass(frozen=True, slots=True)
class Fill:
    """Whether one fact states an attribute: ``fills`` (with ``value``), ``no`` or
    ``ambiguous``. ``error`` is set when the model could not be asked."""

    verdict: FillVerdict
    value: Scalar | None = None
    raw: str = ""
    error: str | None = None


class SlotFiller(Protocol):
    async def fill(self, fact: Fact, spec: AttributeSpec) -> Fill:
        """Whether ``fact`` states the user's ``spec.name``, and its value."""
        ...


_SUBJECT = re.compile(r"^User(?:'s)?\s+(\w+)", re.IGNORECASE)
_IRREGULAR = {"is": "am", "has": "have", "does": "do", "was": "was", "goes": "go"}


def first_person(text: str) -> str:
    """ "User works at X." → "I work at X."; "User's email is …" → "My email is …"."""
    if text.startswith("User's "):
        return "My " + text[len("User's ") :]
    found = _SUBJECT.match(text)
    if found is None:
        return text
    verb = found.group(1)
    lowered = verb.casefold()
    if lowered in _IRREGULAR:
        spoken = _IRREGULAR[lowered]
    elif lowered.endswith(("ches", "shes", "sses", "xes")):
        spoken = verb[:-2]
    elif lowered.endswith("ies"):
        spoken = verb[:-3] + "y"
    elif lowered.endswith("s") and not lowered.endswith("ss"):
        spoken = verb[:-1]
    else:
        spoken = verb
    return f"I {spoken}{text[found.end() :]}"


class RulesFiller:
    """The offline filler: the rules extractor over the fact's text, in the first person.
    Two different values for the attribute are ambiguous."""

    def __init__(self, schema: AttributeSchema) -> None:
        self._schema = schema

    async def fill(self, fact: Fact, spec: AttributeSpec) -> Fill:
        turn = Observation(
            observation_id=f"reslot-{fact.fact_id}",
            subject_id=fact.subject_id,
            text=first_person(fact.text),
            observed_at=fact.observed_at,
        )
        values = {
            c.value for c in extract_candidates(turn, self._schema) if c.attribute == spec.name
        }
        values.discard(None)
        if not values:
            return Fill("no", raw="rules: no value")
        if len(values) > 1:
            return Fill("ambiguous", raw=f"rules: {sorted(map(str, values))}")
        (value,) = values
        return Fill("fills", value=value, raw=f"rules: {value!r}")


def reslot_review_id(fact_id: str, attribute: str) -> str:
    return stable_id("review", "reslot", fact_id, attribute)


def walkable(facts: Iterable[Fact], attribute: str, rejected: Collection[str]) -> list[Fact]:
    """The current free-text facts a re-slotting asks about (not rejected for it), in
    the order their commands go out: oldest claim first, so the policy sees a slot
    filled in the order its values were true."""
    return sorted(
        (
            f
            for f in facts
            if f.status == "current"
            and f.attribute is None
            and reslot_key(f.fact_id, attribute) not in rejected
        ),
        key=lambda f: (f.valid_from, f.recorded_at, f.fact_id),
    )


def reslot_command(
    fact: Fact, spec: AttributeSpec, fill: Fill, *, issued_at: datetime, vocabulary: str
) -> Command:
    """The ``reslot`` command for one answer of ``fills`` or ``ambiguous``."""
    candidate = CandidateFact(
        candidate_id=stable_id("reslot", fact.fact_id, spec.name),
        subject_id=fact.subject_id,
        attribute=spec.name,
        value=fill.value,
        text=fact.text,
        category=spec.category,
        observed_at=fact.observed_at,
        valid_from=fact.valid_from,
        source=fact.source,
        confidence=fact.confidence,
        importance=fact.importance,
        observation_id=fact.observation_id,
    )
    print_ = fingerprint(fact)
    return Command(
        command_id=stable_id("reslot-command", fact.fact_id, spec.name, print_, repr(fill.value)),
        subject_id=fact.subject_id,
        command="reslot",
        issued_at=issued_at,
        attribute=spec.name,
        fact_ids=(fact.fact_id,),
        candidate=candidate,
        reason=f"reslot: {fill.raw}"[:500],
        params={
            "fingerprint": print_,
            "ambiguous": fill.verdict == "ambiguous",
            "vocabulary": vocabulary,
        },
    )
