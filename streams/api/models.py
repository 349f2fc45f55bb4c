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
    "ErasuresPage",
    "FactsPage",
    "Hit",
    "Problem",
    "ReviewPage",
    "SchemaName",
    "SearchPage",
    "SupersessionsPage",
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
