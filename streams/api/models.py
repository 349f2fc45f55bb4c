"""The documents the HTTP API answers, as its OpenAPI document describes them.

The routes build their JSON by hand (orjson, records dumped once); these models
are what ``/openapi.json`` says of it, and what the fuzz test holds every
response to.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime, BaseModel

from slotwise.topics.records import ErasureAttestation, Fact, ReviewItem, SupersessionEvent

__all__ = [
    "CommandAccepted",
    "Decided",
    "ErasuresPage",
    "FactsPage",
    "Hit",
    "Problem",
    "ReviewDecided",
    "ReviewPage",
    "SchemaName",
    "SearchPage",
    "SupersessionsPage",
    "WritesPage",
    "Written",
]


class Problem(BaseModel):
    error: str
    message: str
    field: str | None = None


class FactsPage(BaseModel):
    subject_id: str
    as_of: AwareDatetime | None
    believed_at: AwareDatetime | None
    history: bool
    include_archived: bool
    facts: list[Fact]


class Hit(BaseModel):
    score: float
    fact: Fact


class SearchPage(BaseModel):
    subject_id: str
    q: str
    hits: list[Hit]


class LogMeta(BaseModel):
    subject_id: str
    partition: int
    scanned: int
    complete: bool


class SupersessionsPage(LogMeta):
    supersessions: list[SupersessionEvent]


class ReviewPage(LogMeta):
    items: list[ReviewItem]


class ErasuresPage(LogMeta):
    attestations: list[ErasureAttestation]


class SchemaName(StrEnum):
    observation = "observation"
    candidate = "candidate"
    command = "command"
    fact = "fact"
    supersession = "supersession"
    review = "review"
    erasure = "erasure"


# -- what the writes answer -----------------------------------------------------


class Decided(BaseModel):
    decision: str  # ADD, UPDATE, SUPERSEDE, NOOP, REVIEW
    reason: str | None


class Written(BaseModel):
    """One published observation or candidate; with ``?wait=``, what the write path decided
    (an observation: for each candidate extracted from it)."""

    id: str
    partition: int
    offset: int
    applied: bool
    decisions: list[Decided] = []
    facts: list[Fact] = []
    supersessions: list[SupersessionEvent] = []
    review: list[ReviewItem] = []


class WritesPage(BaseModel):
    subject_id: str
    written: list[Written]
    # Read-your-writes: GET …/facts?after_observation=<this> once it is applied.
    after_observation: str | None


class CommandAccepted(BaseModel):
    subject_id: str
    command_id: str
    command: str
    applied: bool
    outcome: str | None = None
    attestation: ErasureAttestation | None = None


class ReviewDecided(BaseModel):
    subject_id: str
    review_id: str
    action: str
    command_id: str
