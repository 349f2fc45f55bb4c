"""The HTTP writes: every change is a POST under the subject it touches, published as the
worker expects it (:class:`~slotwise.client.publishing.Publisher`: the subject's key,
the worker's partitioner, the worker's limits).

- ``…/observations``: one or a batch; 202 with ``after_observation``, the watermark
  a read waits on, or with ``?wait=S`` what the write path decided for each.
- ``…/candidates``: structured facts to import (same answer).
- ``…/erase``: a fact, an attribute or the whole subject; ``?wait=S`` returns the
  ``erasure/1`` attestation once the worker has deleted and checked.
- ``…/forget``: a forgetting pass over the subject now.
- ``…/review/{review_id}``: accept, reject or edit an open review item.
- ``/v1/facts/{fact_id}/restore``: bring an archived fact back.

Commands travel as ``command/1`` records on the candidates topic, so they are
ordered with the subject's writes. Scopes: observations, candidates, forget and
restore need ``write``; erase ``erase``; review decisions ``review``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

from annotated_types import Interval
from fastapi import FastAPI, Query, Request
from fastapi.responses import Response

from slotwise.client.exceptions import InvalidRequest, PublishFailed, Unavailable
from slotwise.streams.api.access import grant_of, require
from slotwise.streams.api.bodies import (
    CandidateBatch,
    Edit,
    EraseIn,
    ForgetIn,
    ObservationBatch,
    ObservationsIn,
    RestoreIn,
    ReviewDecisionIn,
)
from slotwise.streams.api.models import CommandAccepted, Problem, ReviewDecided, WritesPage
from slotwise.streams.api.operations import (
    archived_subject,
    candidate,
    check_texts,
    command,
    erase,
    issue,
    observation,
    write_records,
)
from slotwise.streams.api.params import FactId, ReviewId, SubjectId, allowed
from slotwise.streams.api.query import NUMBER
from slotwise.streams.read.reads import check_subject
from slotwise.topics.codec import dumps

if TYPE_CHECKING:
    from slotwise.streams.api.serve import ReviewDecider, State

__all__ = ["mount_writes"]

Wait = Annotated[
    float,
    Interval(ge=0, le=30),
    NUMBER,
    Query(description="Seconds to wait until applied (read-your-writes); 0 answers at once."),
]


def _json(body: Any, status: int) -> Response:
    return Response(dumps(body), status_code=status, media_type="application/json")


def _written(body: dict[str, Any], wait: float) -> Response:
    """200 when waited for and every record applied; 202 otherwise."""
    every = all(w["applied"] for w in body["written"])
    return _json(body, 200 if wait and every else 202)


def _issued(body: dict[str, Any]) -> Response:
    return _json(body, 200 if body["applied"] else 202)


_WRITE_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": Problem, "description": "the body is not JSON"},
    413: {"model": Problem, "description": "the body is over the size limit"},
}


def mount_writes(app: FastAPI, state: Callable[[], State], review: ReviewDecider) -> None:
    _errors(app)
    _record_routes(app, state)
    _command_routes(app, state, review)


def _errors(app: FastAPI) -> None:
    @app.exception_handler(InvalidRequest)
    async def refused(_: Request, exc: InvalidRequest) -> Response:
        return _json({"error": "invalid_request", "message": str(exc), "field": exc.field}, 422)

    @app.exception_handler(Unavailable)
    async def unavailable(_: Request, exc: Unavailable) -> Response:
        return _json({"error": f"{exc.service}_unavailable", "message": str(exc)}, 503)

    @app.exception_handler(PublishFailed)
    async def not_published(_: Request, exc: PublishFailed) -> Response:
        return _json({"error": "kafka_unavailable", "message": str(exc)}, 503)


def _record_routes(app: FastAPI, state: Callable[[], State]) -> None:
    @app.post("/v1/subjects/{subject_id:path}/observations", tags=["writes"], status_code=202,
              dependencies=[allowed("write")], response_model=WritesPage,
              responses={200: {"model": WritesPage}, **_WRITE_ERRORS})  # fmt: skip
    async def observations(subject_id: SubjectId, body: ObservationsIn, wait: Wait = 0) -> Response:
        """Publish one observation or a batch (``{"observations": [...]}``) for the write
        path to extract from. 202 with ``after_observation``; with ``wait``, 200 and what
        was decided once every one is applied."""
        subject_id = check_subject(subject_id)
        batch = body.observations if isinstance(body, ObservationBatch) else [body]
        now = datetime.now(UTC)
        where = "observations" if isinstance(body, ObservationBatch) else None
        records = [observation(subject_id, o, now, f"{where}.{i}" if where else None)
                   for i, o in enumerate(batch)]  # fmt: skip
        check_texts(state().settings.max_text_bytes, records, where)
        ids = [r.observation_id for r in records]
        return _written(await write_records(state(), subject_id, records, ids, wait), wait)

    @app.post("/v1/subjects/{subject_id:path}/candidates", tags=["writes"], status_code=202,
              dependencies=[allowed("write")], response_model=WritesPage,
              responses={200: {"model": WritesPage}, **_WRITE_ERRORS})  # fmt: skip
    async def candidates(subject_id: SubjectId, body: CandidateBatch, wait: Wait = 0) -> Response:
        """Import structured facts (``{"candidates": [...]}``); the write path decides each
        against the subject's facts as it does an extracted one."""
        subject_id = check_subject(subject_id)
        now = datetime.now(UTC)
        records = [candidate(subject_id, c, now, f"candidates.{i}")
                   for i, c in enumerate(body.candidates)]  # fmt: skip
        check_texts(state().settings.max_text_bytes, records, "candidates")
        ids = [r.candidate_id for r in records]
        return _written(await write_records(state(), subject_id, records, ids, wait), wait)


def _command_routes(app: FastAPI, state: Callable[[], State], decider: ReviewDecider) -> None:
    @app.post("/v1/subjects/{subject_id:path}/erase", tags=["writes"], status_code=202,
              dependencies=[allowed("erase")], response_model=CommandAccepted,
              responses={200: {"model": CommandAccepted}, **_WRITE_ERRORS})  # fmt: skip
    async def erase_route(subject_id: SubjectId, body: EraseIn, wait: Wait = 0) -> Response:
        """Erase a fact, an attribute or (neither given) the whole subject from every store,
        ordered with its writes; with ``wait``, the attestation once verified."""
        subject_id = check_subject(subject_id)
        erased = await erase(state(), subject_id, body.fact_id, body.attribute, body.reason, wait)
        return _json(erased, 200 if erased["attestation"] else 202)

    @app.post("/v1/subjects/{subject_id:path}/forget", tags=["writes"], status_code=202,
              dependencies=[allowed("write")], response_model=CommandAccepted,
              responses={200: {"model": CommandAccepted}, **_WRITE_ERRORS})  # fmt: skip
    async def forget(subject_id: SubjectId, body: ForgetIn, wait: Wait = 0) -> Response:
        """Run the forgetting pass over this subject now: facts decayed below the threshold
        are archived (soft: restorable)."""
        subject_id = check_subject(subject_id)
        # No policy in params: the worker's own applies, as to its scheduled passes.
        as_of = body.as_of or datetime.now(UTC)
        issued = command(subject_id, "forget", as_of=as_of, reason="forget requested over HTTP")
        return _issued(await issue(state(), issued, wait))

    @app.post("/v1/facts/{fact_id}/restore", tags=["writes"], status_code=202,
              response_model=CommandAccepted, responses={
                  200: {"model": CommandAccepted},
                  404: {"model": Problem, "description": "no cold tier holds the fact"},
                  **_WRITE_ERRORS})  # fmt: skip
    async def restore(
        request: Request,
        fact_id: FactId,
        body: RestoreIn,
        wait: Wait = 0,
    ) -> Response:
        """Bring an archived fact back to the hot tier. A token that reaches some subjects
        only must name the fact's ``subject_id``."""
        grant = grant_of(request.scope)
        subject = body.subject_id
        if subject is None:
            require(grant, "write", None)
            subject = await archived_subject(state(), fact_id)
            if subject is None:
                return _json({"error": "not_found", "message": f"{fact_id} is in no cold tier",
                              "field": "fact_id"}, 404)  # fmt: skip
        require(grant, "write", subject)
        now = datetime.now(UTC)
        issued = command(subject, "restore", fact_id=fact_id, as_of=now,
                           reason="requested over HTTP")  # fmt: skip
        return _issued(await issue(state(), issued, wait))

    @app.post("/v1/subjects/{subject_id:path}/review/{review_id}", tags=["writes"],
              status_code=202, dependencies=[allowed("review")], response_model=ReviewDecided,
              responses=_WRITE_ERRORS)  # fmt: skip
    async def decide(
        subject_id: SubjectId,
        review_id: ReviewId,
        body: ReviewDecisionIn,
    ) -> Response:
        """Accept, reject or edit (with ``value``) one review item: a ``review`` command
        ordered with the subject's writes."""
        subject_id = check_subject(subject_id)
        value = str(body.value) if isinstance(body, Edit) else None
        command_id = await decider.decide(subject_id, review_id, body.action, value)
        answer = {"subject_id": subject_id, "review_id": review_id, "action": body.action,
                  "command_id": command_id}  # fmt: skip
        return _json(answer, 202)
