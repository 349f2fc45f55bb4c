"""The labelled sets ``slotwise eval`` reads: slot pairs and extraction turns.

Their fields are documented in ``datasets/README.md``; these frozen models
read them strictly, so a malformed line is reported with its file and line
number instead of being half-scored.

A pair's ``verification_count`` counts statements (1 = said once) while a
stored :class:`~topics.records.Fact` counts re-confirmations (a new fact has
0): :func:`incumbent_fact` converts between the two.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from slotwise.processors.model import stable_id
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.codec import loads
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Fact, Observation

__all__ = [
    "EXPECTED_DECISIONS",
    "DatasetError",
    "Expected",
    "FrozenModel",
    "Incumbent",
    "LabelledTurn",
    "Pair",
    "incumbent_fact",
    "jsonl_rows",
    "read_pairs",
    "read_turns",
    "subject_of",
    "turn_observation",
]

EXPECTED_DECISIONS = ("ADD", "UPDATE", "NOOP", "SUPERSEDE", "REVIEW", "none", "erase")
ExpectedDecision = Literal["ADD", "UPDATE", "NOOP", "SUPERSEDE", "REVIEW", "none", "erase"]
# A chat statement the rules read directly (processors.rules.findings.DIRECT): an
# incumbent said once from chat is neither more nor less sure than a new one.
INCUMBENT_CONFIDENCE = 0.9
FREE_TEXT_CATEGORY = "event"


class DatasetError(SlotwiseError, ValueError):
    """A labelled file is missing or a line is not shaped as datasets/README.md says."""


class FrozenModel(BaseModel):
    """A labelled record: immutable, and no field the format does not name."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Expected(FrozenModel):
    attribute: str | None
    value: str | None


class Incumbent(FrozenModel):
    text: str
    attribute: str | None
    value: str | None
    observed_at: AwareDatetime
    source: Literal["chat", "profile", "billing"]
    verification_count: int = Field(ge=1)


class PairTurn(FrozenModel):
    text: str
    observed_at: AwareDatetime


class Erase(FrozenModel):
    attribute: str | None = None
    fact: Literal["incumbent"] | None = None
    subject: bool | None = None


class Pair(FrozenModel):
    id: str
    kind: str
    incumbent: Incumbent
    turn: PairTurn
    same_slot: bool
    decision: ExpectedDecision
    expected: Expected | None
    also: tuple[Expected, ...] = ()
    note: str = ""
    erase: Erase | None = None


class LabelledTurn(FrozenModel):
    id: str
    kind: str
    text: str
    observed_at: AwareDatetime
    speaker: str = "user"
    facts: tuple[Expected, ...] = ()
    note: str = ""
    erase: Erase | None = None


def jsonl_rows(path: Path) -> list[tuple[int, object]]:
    """``(line number, parsed JSON)`` of each non-blank line of a labelled file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from None
    rows: list[tuple[int, object]] = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if line.strip():
            try:
                rows.append((number, loads(line)))
            except ValueError as exc:
                raise DatasetError(f"{path}:{number}: not JSON ({exc})") from None
    return rows


def read_pairs(path: Path) -> list[Pair]:
    """Every pair of a ``slot_pairs.*.jsonl`` file, in file order."""
    pairs: list[Pair] = []
    for number, row in jsonl_rows(path):
        try:
            pairs.append(Pair.model_validate(row))
        except ValidationError as exc:
            raise DatasetError(f"{path}:{number}: not a slot pair: {exc}") from None
    return pairs


def read_turns(path: Path) -> list[LabelledTurn]:
    """Every turn of a ``turns.*.jsonl`` file, in file order."""
    turns: list[LabelledTurn] = []
    for number, row in jsonl_rows(path):
        try:
            turns.append(LabelledTurn.model_validate(row))
        except ValidationError as exc:
            raise DatasetError(f"{path}:{number}: not a labelled turn: {exc}") from None
    return turns


def subject_of(item_id: str, namespace: str = "eval") -> str:
    """One subject per pair or turn, so no two of them can see each other's facts."""
    return f"{namespace}-{item_id}"


def incumbent_fact(
    pair: Pair, schema: AttributeSchema, *, subject_id: str, embedding_model: str | None
) -> Fact:
    """The pair's incumbent as the store would hold it after it was said
    ``verification_count`` times (so re-confirmed one time fewer)."""
    held = pair.incumbent
    spec = schema.get(held.attribute)
    confirmations = held.verification_count - 1
    return Fact(
        schema="fact/1",
        fact_id=stable_id("eval-incumbent", subject_id),
        subject_id=subject_id,
        attribute=held.attribute,
        value=held.value,
        text=held.text,
        category=spec.category if spec is not None else FREE_TEXT_CATEGORY,
        status="current",
        valid_from=held.observed_at,
        observed_at=held.observed_at,
        recorded_at=held.observed_at,
        source=held.source,
        confidence=INCUMBENT_CONFIDENCE,
        importance=0.5,
        candidate_id=stable_id("eval-incumbent-candidate", subject_id),
        last_verified=held.observed_at if confirmations else None,
        verification_count=confirmations,
        embedding_model=embedding_model,
    )


def turn_observation(
    item_id: str, text: str, observed_at: datetime, *, subject_id: str
) -> Observation:
    """A labelled turn as a chat application would publish it."""
    return Observation(
        schema="observation/1",
        observation_id=stable_id("eval-observation", subject_id, item_id),
        subject_id=subject_id,
        session_id=f"{subject_id}-session",
        speaker="user",
        text=text,
        observed_at=observed_at,
        source="chat",
    )
