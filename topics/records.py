"""The message records. Field names are public API.

Every record is a frozen pydantic model with a ``schema`` literal naming its
kind and version. Types are strict (a number is not a string, a string is not
a number) except timestamps, which arrive as ISO-8601 strings and must carry a
timezone.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
)
from pydantic_core import PydanticCustomError

__all__ = [
    "CandidateFact",
    "Command",
    "CommandKind",
    "ErasureAttestation",
    "ErasureCheck",
    "Fact",
    "FactStatus",
    "IncumbentMatch",
    "Observation",
    "Record",
    "RetainedCopy",
    "ReviewAction",
    "ReviewItem",
    "ReviewOrigin",
    "ReviewStatus",
    "SupersessionEvent",
]

MAX_ID_LENGTH = 256
MAX_METADATA_DEPTH = 8
# The vector index keeps a category in 256 bytes: 64 characters of up to 4 bytes each.
MAX_CATEGORY_LENGTH = 64
# Far inside datetime's years 1..9999, so date arithmetic on a timestamp ("next week",
# "last month") cannot overflow; no real observation lies outside.
MIN_YEAR, MAX_YEAR = 1000, 9000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _identifier(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "must not be empty or blank")
    if _CONTROL.search(value):
        raise PydanticCustomError("control_chars", "must not contain control characters")
    return value


_CALENDAR_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _timestamp_string(value: object) -> object:
    # Unix numbers are ambiguous about their unit; the contract says ISO-8601. Pydantic's
    # lax mode would read a numeric string ("3", "1700000000") as Unix seconds too, so a
    # string must open with a calendar date.
    if (isinstance(value, int | float) and not isinstance(value, bool)) or (
        isinstance(value, str) and not _CALENDAR_DATE.match(value)
    ):
        raise PydanticCustomError("timestamp_type", "must be an ISO-8601 string with a timezone")
    return value


def _plausible(value: datetime) -> datetime:
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        raise PydanticCustomError(
            "timestamp_range",
            "year must be between {low} and {high}",
            {"low": MIN_YEAR, "high": MAX_YEAR},
        )
    return value


def _depth(value: object, level: int = 0) -> int:
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level + 1)
    return level


def _shallow(value: dict[str, Any]) -> dict[str, Any]:
    if _depth(value) > MAX_METADATA_DEPTH:
        raise PydanticCustomError(
            "too_deep", "is nested deeper than {limit} levels", {"limit": MAX_METADATA_DEPTH}
        )
    return value


Identifier = Annotated[
    str,
    # The pattern says in the published JSON Schema what _identifier checks. Its blanks are
    # str.isspace()'s, spelled out: JSON Schema's regexes are ECMA-262's, whose \s differs.
    Field(
        min_length=1,
        max_length=MAX_ID_LENGTH,
        json_schema_extra={
            "pattern": r"^(?![ \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$)"
            r"[^\x00-\x1f\x7f]+$"
        },
    ),
    AfterValidator(_identifier),
]
Timestamp = Annotated[
    AwareDatetime,
    Field(strict=False),
    BeforeValidator(_timestamp_string),
    AfterValidator(_plausible),
]
Category = Annotated[str, Field(max_length=MAX_CATEGORY_LENGTH)]
Unit = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Metadata = Annotated[dict[str, Any], AfterValidator(_shallow)]
Scalar = str | int | float | bool
# JSON has no tuple: accept an array for an immutable sequence.
Ids = Annotated[tuple[str, ...], Field(strict=False)]

FactStatus = Literal["current", "superseded", "history", "archived"]
CommandKind = Literal["watermark", "erase", "forget", "restore", "review", "consolidate", "reslot"]
ReviewAction = Literal["accept", "reject", "edit"]
# "offline": the slot matcher that runs without a model (it answers NONE).
DecidedBy = Literal["exact", "llm", "offline", "consolidation", "policy"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")


class Observation(_Record):
    """A chat turn as a chat application publishes it."""

    schema_: Literal["observation/1"] = Field("observation/1", alias="schema")
    observation_id: Identifier
    subject_id: Identifier
    session_id: str | None = None
    speaker: str = "user"
    text: str
    observed_at: Timestamp
    source: str = "chat"
    metadata: Metadata = Field(default_factory=dict)


class IncumbentMatch(_Record):
    """Which stored fact extraction found a free-text candidate to restate, update or
    contradict, answered in the extraction call itself.

    ``fact_id`` is the incumbent it named, or None for none of ``considered``: the
    subject's current facts the extraction was shown, and the facts of the other
    candidates of the same turn. The worker uses the answer instead of asking the
    slot-match question only while every current neighbour of the candidate is among
    ``considered`` and a named incumbent is still one of them; otherwise it asks.
    """

    fact_id: str | None = None
    considered: Ids = ()


class CandidateFact(_Record):
    """A fact about the subject proposed for the store, from extraction or an importer.

    ``attribute`` is None for facts outside the schema: they take the vector and
    model path to find their slot.
    """

    schema_: Literal["candidate/1"] = Field("candidate/1", alias="schema")
    candidate_id: Identifier
    subject_id: Identifier
    # A key of the slot index: control characters (NUL separates its parts) are refused.
    attribute: Identifier | None = None
    value: Scalar | None = None
    text: str
    category: Category | None = None
    observed_at: Timestamp
    valid_from: Timestamp | None = None
    source: str = "chat"
    confidence: Unit = 0.8
    importance: Unit = 0.5
    observation_id: str | None = None
    # The subject says the value changed or corrects it ("my email changed, it's … now"):
    # on a high-stakes slot that is what lets a new value replace an uncorroborated one.
    stated_change: bool = False
    # The facts this candidate was inferred from (an importer's summary): superseding one
    # of them marks the fact it becomes ``needs_revalidation`` (optional; added later).
    derived_from: Ids = ()
    # The state holds now though it began before it was said ("I've been at Monzo for 3
    # years"): observed after the incumbent, it may replace it despite the earlier start
    # (optional; added later; importers leave it False and keep the out-of-order rule).
    ongoing: bool = False
    # The reader could not decide what the turn asks or states, and asks a human this
    # instead: a deletion request whose scope it cannot read, or a turn about a held slot
    # whose new value it cannot read. Such a candidate is never stored: the write path
    # opens an ``ambiguous`` review item (optional; added later).
    question: str | None = None
    # Extraction already answered the slot question (optional; added later; absent, the
    # candidate takes the vector fetch and slot-match question as it always did).
    incumbent_match: IncumbentMatch | None = None

    @property
    def effective_valid_from(self) -> datetime:
        return self.valid_from or self.observed_at


class Command(_Record):
    """An instruction ordered with the subject's writes on the candidates topic.

    Everything that changes a subject after the write (erasure, forgetting,
    review decisions, consolidation) travels as one, keyed by the subject, so
    it has a defined place among the subject's writes, and carries its own
    evaluation time (``issued_at``, or ``as_of``) so a replay decides the same.

    * ``watermark`` — every candidate of ``observation_id`` is before it in the
      log: applying it makes the observation visible to ``slotwise wait``;
    * ``erase`` — the whole subject, or ``attribute``, or ``fact_id``;
    * ``forget`` — a soft-forgetting pass evaluated at ``as_of``;
    * ``restore`` — bring ``fact_id`` back from the cold tier;
    * ``review`` — a human's ``action`` on ``review_id`` (``value`` for an edit);
    * ``consolidate`` / ``reslot`` — a background job's ``candidate``, applied
      through the log with ``fact_ids`` naming what it was decided against.

    ``params`` holds a command's knobs (thresholds, budgets), shallow JSON.
    Fields a kind does not use are left out; older producers' commands decode
    unchanged.
    """

    schema_: Literal["command/1"] = Field("command/1", alias="schema")
    command_id: Identifier
    subject_id: Identifier
    command: CommandKind
    issued_at: Timestamp
    observation_id: str | None = None
    reason: str | None = None
    attribute: Identifier | None = None
    fact_id: Identifier | None = None
    fact_ids: Ids = ()
    review_id: Identifier | None = None
    action: ReviewAction | None = None
    value: Scalar | None = None
    as_of: Timestamp | None = None
    candidate: CandidateFact | None = None
    params: Metadata = Field(default_factory=dict)


class Fact(_Record):
    """The latest state of one fact, as kept in Redis and on the compacted facts topic."""

    schema_: Literal["fact/1"] = Field("fact/1", alias="schema")
    fact_id: Identifier
    subject_id: Identifier
    attribute: str | None
    value: Scalar | None
    text: str
    category: str | None
    status: FactStatus
    valid_from: Timestamp
    valid_to: Timestamp | None = None
    observed_at: Timestamp
    recorded_at: Timestamp
    source: str
    confidence: Unit
    importance: Unit
    supersedes: str | None = None
    superseded_by: str | None = None
    candidate_id: str
    observation_id: str | None = None
    last_verified: Timestamp | None = None
    verification_count: int = 0
    embedding_model: str | None = None
    # The facts this one was inferred from (consolidation, re-slotting): erasing any of
    # them erases this one too.
    derived_from: Ids = ()
    # A fact it was derived from (at most 3 hops back) was superseded since: the claim may
    # be stale until the consolidation pass re-derives it or a human reviews it.
    needs_revalidation: bool = False


class SupersessionEvent(_Record):
    """What subscribers consume: one fact retired in favour of another."""

    schema_: Literal["supersession/1"] = Field("supersession/1", alias="schema")
    event_id: Identifier
    subject_id: Identifier
    attribute: str | None
    old_fact_id: str
    new_fact_id: str
    old_value: Scalar | None
    new_value: Scalar | None
    old_text: str
    new_text: str
    decided_by: DecidedBy
    reason: str
    valid_from: Timestamp
    observation_id: str | None = None
    recorded_at: Timestamp


ReviewStatus = Literal["open", "accepted", "rejected", "edited", "superseded"]
ReviewOrigin = Literal["write", "consolidation", "revalidation", "reslot"]


class ReviewItem(_Record):
    """A pair the pipeline would not decide alone; nothing destructive was written.

    The same ``review_id`` is published again when the item is resolved (the
    ``review/1`` resolution record): ``status`` says how, ``resolution`` why,
    ``fact_ids`` what the decision wrote, ``replaced_by`` the item that took its
    place when it was re-evaluated against a changed incumbent. ``origin`` says
    which job asked. Every field after ``created_at`` was added later with a
    default, so older records decode as open items of the write path, and older
    consumers ignore the new fields.
    """

    schema_: Literal["review/1"] = Field("review/1", alias="schema")
    review_id: Identifier
    subject_id: Identifier
    kind: Literal["high_stakes", "close_neighbour", "ambiguous", "model_failure"]
    reason: str
    candidate: CandidateFact
    incumbent_fact_ids: Ids = ()
    created_at: Timestamp
    origin: ReviewOrigin = "write"
    status: ReviewStatus = "open"
    resolution: str | None = None
    resolved_at: Timestamp | None = None
    command_id: str | None = None
    fact_ids: Ids = ()
    replaced_by: str | None = None


class ErasureCheck(_Record):
    """One look for what an erasure should have left nothing of, in one store.

    ``method``: ``by_fact_id`` (the erased ids), ``by_subject`` (anything of the
    subject, for a whole-subject erase) or ``by_text`` (the erased texts, through
    the vector index and as exact strings). ``found`` is what was left: 0 passes.
    """

    store: str
    method: Literal["by_fact_id", "by_subject", "by_text"]
    looked_for: int
    found: int
    checked_at: Timestamp


class RetainedCopy(_Record):
    """A place that may still hold the erased data, which the erasure cannot edit.

    ``reach`` is ``slotwise`` for slotwise's own append-only topics (removed by
    their retention by ``expires_by``; None when nothing bounds it) and
    ``producers`` for what others wrote, outside slotwise's reach.
    """

    store: str
    holds: str
    reach: Literal["slotwise", "producers"]
    cleanup_policy: str
    retention_ms: int | None
    expires_by: Timestamp | None
    note: str = ""


class ErasureAttestation(_Record):
    """Proof that an erase command ran: what was deleted, what was checked, what remains.

    ``deleted`` counts per store; ``remaining`` what the checks found left per
    store (0 everywhere when ``verified``); ``checks`` every look that was made
    (nothing is reported that was not checked); ``retained`` the append-only
    copies an erasure cannot edit, with when retention removes them. The fields
    after ``completed_at`` were added later: older attestations decode unchanged.
    """

    schema_: Literal["erasure/1"] = Field("erasure/1", alias="schema")
    attestation_id: Identifier
    subject_id: Identifier
    command_id: str
    deleted: dict[str, int]
    remaining: dict[str, int]
    verified: bool
    completed_at: Timestamp
    scope: Literal["subject", "attribute", "fact"] = "subject"
    attribute: str | None = None
    fact_id: str | None = None
    reason: str | None = None
    requested_at: Timestamp | None = None
    attempts: int = 1
    checks: Annotated[tuple[ErasureCheck, ...], Field(strict=False)] = ()
    retained: Annotated[tuple[RetainedCopy, ...], Field(strict=False)] = ()


Record = (
    Observation
    | CandidateFact
    | Command
    | Fact
    | SupersessionEvent
    | ReviewItem
    | ErasureAttestation
)
