"""What the HTTP writes accept: the records' fields a caller chooses, nothing else.

The subject comes from the path (a body naming one is refused: ``extra``
fields are errors), ids default to fresh ones, times to now. Bodies are strict:
a number sent as ``"0.5"`` or a flag as ``1`` is refused, as the document's types
say, rather than guessed at by pydantic's lax mode. Each body is turned into the
record the worker reads by :mod:`slotwise.streams.api.writes`, and a record's own
validation error is answered as a 422 naming the field.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator
from pydantic_core import PydanticCustomError

from slotwise.topics.records import Category, Identifier, Timestamp, Unit

__all__ = [
    "MAX_BATCH",
    "CandidateBatch",
    "CandidateIn",
    "Decide",
    "Edit",
    "EraseIn",
    "ForgetIn",
    "ObservationBatch",
    "ObservationIn",
    "ObservationsIn",
    "RestoreIn",
    "ReviewDecisionIn",
]

MAX_BATCH = 100
Short = Annotated[str, Field(min_length=1, max_length=256)]
# What the document can say of the records' rules, said, so a request it calls valid is one
# slotwise takes: years the records accept, integers JSON carries exactly, flat metadata.
When = Annotated[Timestamp, Field(json_schema_extra={"pattern": r"^[1-8][0-9]{3}-"})]
Whole = Annotated[int, Field(ge=-(2**53), le=2**53)]
Value = Annotated[str | Whole | float | bool, Field(union_mode="left_to_right")]
Flat = dict[Annotated[str, Field(max_length=256)], Value | None]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ObservationIn(_Body):
    """One turn or note about the subject. Send your own ``observation_id`` to make a retry
    safe: the same id is applied once."""

    observation_id: Identifier | None = None
    text: Annotated[str, Field(min_length=1, description="What was said or observed.")]
    observed_at: When | None = Field(None, description="When; now if not given.")
    session_id: Short | None = None
    speaker: Short = "user"
    source: Short = "chat"
    metadata: Flat = Field(default_factory=dict)


class ObservationBatch(_Body):
    observations: Annotated[list[ObservationIn], Field(min_length=1, max_length=MAX_BATCH)]


def _form(body: object) -> str:
    return (
        "ObservationBatch" if isinstance(body, dict) and "observations" in body else "ObservationIn"
    )


# One observation, or ``{"observations": [...]}``: told apart by that key, so a refusal
# names the field of the form that was sent, not of both.
ObservationsIn = Annotated[
    Annotated[ObservationIn, Tag("ObservationIn")]
    | Annotated[ObservationBatch, Tag("ObservationBatch")],
    Discriminator(_form),
]


class CandidateIn(_Body):
    """A structured fact to import, decided by the write path like an extracted one."""

    candidate_id: Identifier | None = None
    attribute: Identifier | None = None
    value: Value | None = None
    text: Annotated[str, Field(min_length=1)]
    category: Category | None = None
    observed_at: When | None = None
    valid_from: When | None = None
    source: Short = "import"
    confidence: Unit = 0.8
    importance: Unit = 0.5
    stated_change: bool = Field(False, description="The source says the value changed.")


class CandidateBatch(_Body):
    candidates: Annotated[list[CandidateIn], Field(min_length=1, max_length=MAX_BATCH)]


class EraseIn(_Body):
    """Neither ``fact_id`` nor ``attribute``: the whole subject. Not both."""

    model_config = ConfigDict(json_schema_extra={"not": {"required": ["fact_id", "attribute"]}})

    @model_validator(mode="before")
    @classmethod
    def _one_scope(cls, body: object) -> object:
        if isinstance(body, dict) and "fact_id" in body and "attribute" in body:
            raise PydanticCustomError("one_scope", "give fact_id or attribute, not both")
        return body

    fact_id: Identifier | None = None
    attribute: Identifier | None = None
    reason: Annotated[str, Field(max_length=1000)] | None = None


class ForgetIn(_Body):
    as_of: When | None = Field(None, description="Score the facts as of; now if not.")


class RestoreIn(_Body):
    subject_id: Identifier | None = Field(
        None, description="The fact's subject; looked up in the cold tier if not given."
    )


class Decide(_Body):
    action: Literal["accept", "reject"]


class Edit(_Body):
    action: Literal["edit"]
    value: Value = Field(description="The value to store instead.")


def _decision(body: object) -> str:
    return "Edit" if isinstance(body, dict) and body.get("action") == "edit" else "Decide"


# accept or reject, or edit with the value to store: told apart by the action.
ReviewDecisionIn = Annotated[
    Annotated[Decide, Tag("Decide")] | Annotated[Edit, Tag("Edit")], Discriminator(_decision)
]
