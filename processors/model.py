"""Domain values passed between the stages."""

from __future__ import annotations

import enum
import functools
import uuid
from dataclasses import dataclass, field
from typing import Literal

from slotwise.topics.records import CandidateFact, Command, Fact, ReviewItem, SupersessionEvent

__all__ = [
    "ERASURE_QUESTION",
    "ApplyOutcome",
    "ApplyStatus",
    "Decision",
    "Neighbour",
    "Resolution",
    "SlotAnswer",
    "Tier",
    "VectorRow",
    "stable_id",
]

_NAMESPACE = uuid.UUID("6f1c3d2e-5b7a-4c1e-9a53-2d8e0f6b9c41")


# A candidate's own fact id is derived four times on its way through the write path
# (snapshot, cascade, resolution, the new fact); SHA-1 and the UUID's string were 2 % of
# the exact path's worker CPU. A pure function of its parts: remembering the recent ones
# changes no id.
@functools.lru_cache(maxsize=8192)
def stable_id(*parts: str) -> str:
    """A UUID that a replay recomputes identically from the same inputs."""
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join(parts)))


# The category of a reader's question about a deletion it could not scope
# (``CandidateFact.question``): always asked, whether or not the turn names a held value.
# Any other question without an attribute is asked only about the held facts it names.
ERASURE_QUESTION = "erasure"


# Where a fact's vector lives: the hot tier serves the write path and default reads, the
# cold tier holds archived facts until a read asks for them.
Tier = Literal["hot", "cold"]


class Decision(enum.StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    NOOP = "NOOP"
    SUPERSEDE = "SUPERSEDE"
    REVIEW = "REVIEW"


class ApplyStatus(enum.StrEnum):
    APPLIED = "applied"
    ALREADY_APPLIED = "already_applied"
    STALE = "stale"


@dataclass(frozen=True, slots=True)
class ApplyOutcome:
    """What ``apply`` did. ``version`` is the subject's version after the call.

    ``stored`` is the outputs blob of an event applied before (a replay), to be
    re-emitted instead of the freshly computed outputs.
    """

    status: ApplyStatus
    version: int
    stored: bytes | None = None

    @property
    def stale(self) -> bool:
        return self.status is ApplyStatus.STALE

    @property
    def already_applied(self) -> bool:
        return self.status is ApplyStatus.ALREADY_APPLIED


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An existing current fact of the same subject, near the candidate in vector space."""

    fact: Fact
    similarity: float


@dataclass(frozen=True, slots=True)
class SlotAnswer:
    """The slot matcher's verdict over a numbered neighbour list.

    ``index`` is a position in the list the matcher was given, or None (no
    neighbour fills the candidate's slot). ``review_reason`` asks for a human
    without deciding. ``error`` is set when the model could not be asked.
    """

    index: int | None
    raw: str = ""
    review_reason: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class VectorRow:
    """What the vector index keeps of a fact: enough to embed it and filter by subject."""

    fact_id: str
    subject_id: str
    text: str
    category: str | None


@dataclass(frozen=True, slots=True)
class Resolution:
    """Everything one candidate changes, computed before anything is written.

    ``facts`` are the new and changed fact records (full latest state), in the
    order they should be written; the sinks apply them atomically.
    """

    decision: Decision
    candidate: CandidateFact
    reason: str
    decided_by: str = "exact"
    facts: tuple[Fact, ...] = ()
    supersessions: tuple[SupersessionEvent, ...] = ()
    review: ReviewItem | None = None
    vector_rows: tuple[VectorRow, ...] = field(default=())
    # Commands for the subject's log, applied after the candidate (a restore of an archived
    # fact the candidate restated: processors/cold_restate.py).
    commands: tuple[Command, ...] = ()
