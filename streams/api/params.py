"""The path parameters every subject route shares, and the scope each route needs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Path, Request
from pydantic import TypeAdapter

from slotwise.sinks.redis.tokens import Grant, Scope
from slotwise.streams.api.access import grant_of, require
from slotwise.topics.records import Identifier

__all__ = ["FactId", "ReviewId", "SubjectId", "allowed"]

# The records' own rule for an id (not blank, no control characters), in the document.
_ID_PATTERN = TypeAdapter(Identifier).json_schema()["pattern"]


def _id(description: str) -> Any:
    return Path(
        min_length=1, max_length=256, json_schema_extra={"pattern": _ID_PATTERN},
        description=description,
    )  # fmt: skip


SubjectId = Annotated[str, _id("The subject; any id a record accepts.")]
ReviewId = Annotated[str, _id("The review item's review_id.")]
FactId = Annotated[str, _id("The fact's fact_id.")]


def allowed(scope: Scope) -> Any:
    """A route's dependency: 403 unless the caller's grant holds ``scope`` on the path's
    subject (checked before the rest of the request is validated)."""

    async def check(request: Request) -> Grant:
        grant = grant_of(request.scope)
        require(grant, scope, request.path_params.get("subject_id"))
        return grant

    return Depends(check)
