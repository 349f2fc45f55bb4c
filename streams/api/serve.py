"""``slotwise serve``: the HTTP read API (FastAPI) and, beside it, the inspector page.

Every route under ``/v1/subjects/{subject_id}/`` concerns that one subject and
reads through :class:`~slotwise.streams.read.reads.Reads`, as the CLI and the client
do: ``facts`` (``as_of``, ``believed_at``, ``history``, ``include_archived``,
``after_observation`` to wait for read-your-writes), ``search``,
``supersessions``, ``review``, ``erasures``. ``/v1/schemas/{name}`` serves the
records' JSON Schemas, ``/openapi.json`` the API's own document, ``/healthz``
and ``/metrics`` what a probe and Prometheus read.

Errors are JSON ``{"error", "message", "field"}``: 422 for a request slotwise
refuses (a subject id a record would refuse, a time without a timezone, a
bound), 401 without the token, 404, 409 when the observation waited for is
not applied in time, 503 when Redis, Milvus or Kafka fails. Nothing else.

**Access** (``api_access.py``): loopback by default; with ``SLOTWISE_API_TOKEN``
set every request but ``/healthz`` needs it; off loopback ``slotwise serve``
refuses to start without one. The documents answered: ``api_models.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol

from annotated_types import Interval
from fastapi import FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, TypeAdapter
from starlette.exceptions import HTTPException

from slotwise.streams.api.access import COOKIE, ServeRefused, TokenGate, check_bind
from slotwise.streams.api.models import (
    ErasuresPage,
    FactsPage,
    Problem,
    ReviewPage,
    SchemaName,
    SearchPage,
    SupersessionsPage,
)
from slotwise.streams.api.query import NUMBER, WHOLE, Flag, Instant
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import (
    MAX_K,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    FactQuery,
    InvalidQuery,
    Reads,
    ReadUnavailable,
    check_subject,
)
from slotwise.streams.read.subject_log import LogPage
from slotwise.topics.codec import dumps
from slotwise.topics.contracts import MODELS, load
from slotwise.topics.records import Identifier

__all__ = ["COOKIE", "ReviewDecider", "ServeRefused", "check_bind", "create_app"]

_NOT_BLANK = r"[^\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
# The records' own rule for an id (not blank, no control characters), in the document.
_ID_PATTERN = TypeAdapter(Identifier).json_schema()["pattern"]
SubjectId = Annotated[
    str,
    Path(
        min_length=1,
        max_length=256,
        json_schema_extra={"pattern": _ID_PATTERN},
        description="The subject; any id a record accepts.",
    ),
]

Limit = Annotated[
    int,
    Interval(ge=1, le=MAX_LIMIT),
    WHOLE,
    Query(description="At most this many, newest first."),
]


class ReviewDecider(Protocol):
    """What a review action does: configured once the review loop exists."""

    async def decide(self, subject_id: str, review_id: str, action: str) -> None: ...


# -- responses (documented in the OpenAPI document; built by hand for speed) ----


def _json(body: Any, status: int = 200) -> Response:
    return Response(dumps(body), status_code=status, media_type="application/json")


def _problem(status: int, error: str, message: str, field: str | None = None) -> Response:
    return _json({"error": error, "message": message, "field": field}, status)


def _record(record: BaseModel) -> Any:
    return record.model_dump(mode="json", by_alias=True)


_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "description": text}
    for status, text in {
        401: "the bearer token is missing or wrong",
        404: "no such route",
        422: "the request is refused: the message and field say why",
        503: "Redis, Milvus or Kafka failed",
    }.items()
}


# -- the app --------------------------------------------------------------------


@dataclass
class State:
    reads: Reads
    max_wait_s: float
    review: ReviewDecider | None


def create_app(
    settings: Settings,
    *,
    token: str | None = None,
    max_wait_s: float = 30.0,
    review: ReviewDecider | None = None,
    reads: Callable[[AsyncExitStack], Reads] | None = None,
) -> Any:
    """The ASGI app: the API, the inspector page, and the token gate when ``token`` is set."""
    holder: dict[str, State] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            opened = reads(stack) if reads else Reads.open(settings, stack)
            holder["state"] = State(opened, max_wait_s, review)
            yield

    app = FastAPI(
        title="slotwise",
        version="1",
        summary="An agent's long-term memory, read one subject at a time.",
        lifespan=lifespan,
        responses=_ERRORS,
    )

    def state() -> State:
        return holder["state"]

    _handlers(app)
    _routes(app, state)
    if token:
        _document_the_token(app)
    if review is not None:
        _review_route(app, review)
    from slotwise.streams.api.inspector import mount  # noqa: PLC0415 - the page is optional weight

    mount(app, state, settings, token_required=bool(token))
    return TokenGate(app, token) if token else app


def _document_the_token(app: FastAPI) -> None:
    """Every operation needs the bearer token but those that opt out (``/healthz``)."""
    generate = app.openapi

    def documented() -> dict[str, Any]:
        document = generate()
        schemes = document.setdefault("components", {}).setdefault("securitySchemes", {})
        schemes["bearer"] = {"type": "http", "scheme": "bearer"}
        document["security"] = [{"bearer": []}]
        return document

    app.openapi = documented  # type: ignore[method-assign]


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0]
        where = [str(p) for p in first.get("loc", ()) if p not in ("query", "path", "body")]
        field = ".".join(where) or None
        return _problem(422, "invalid_request", f"{field or 'request'}: {first['msg']}", field)

    @app.exception_handler(InvalidQuery)
    async def refused(_: Request, exc: InvalidQuery) -> Response:
        return _problem(422, "invalid_request", str(exc), exc.field)

    @app.exception_handler(ReadUnavailable)
    async def unavailable(_: Request, exc: ReadUnavailable) -> Response:
        return _problem(503, f"{exc.service}_unavailable", str(exc))

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> Response:
        return _problem(exc.status_code, "http_error", str(exc.detail))


class Decision(BaseModel):
    action: Literal["accept", "reject"]


def _review_route(app: FastAPI, decider: ReviewDecider) -> None:
    @app.post("/v1/subjects/{subject_id:path}/review/{review_id}", tags=["subjects"],
              status_code=202)  # fmt: skip
    async def decide(
        subject_id: SubjectId,
        review_id: Annotated[str, Path(min_length=1, max_length=256)],
        decision: Decision,
    ) -> dict[str, str]:
        """Accept or reject one review item: a ``command/1`` ordered with the subject's writes."""
        check_subject(subject_id)
        await decider.decide(subject_id, review_id, decision.action)
        return {"subject_id": subject_id, "review_id": review_id, "action": decision.action}


def _routes(app: FastAPI, state: Callable[[], State]) -> None:
    # Open to probes even when a token is required: it says nothing about any subject.
    @app.get("/healthz", tags=["operations"], responses={200: {}, 503: {}},
             openapi_extra={"security": []})  # fmt: skip
    async def healthz() -> Response:
        """200 while Redis answers; 503 with the failure otherwise."""
        try:
            await state().reads.ping()
        except ReadUnavailable as exc:
            return _json({"healthy": False, "failing": {exc.service: str(exc)}}, 503)
        return _json({"healthy": True})

    @app.get("/metrics", tags=["operations"], response_class=Response)
    async def metrics() -> Response:
        """Prometheus exposition of this process."""
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/v1/schemas", tags=["contracts"])
    async def schemas() -> dict[str, list[str]]:
        """The names of the published record schemas."""
        return {"schemas": list(MODELS)}

    @app.get("/v1/schemas/{name}", tags=["contracts"])
    async def schema(name: SchemaName) -> Response:
        """The JSON Schema (draft 2020-12) of one public record."""
        return _json(load(name.value))

    @app.get("/v1/subjects/{subject_id:path}/facts", tags=["subjects"], response_model=FactsPage,
             responses={409: {"model": Problem, "description": "not applied in time"}})  # fmt: skip
    async def facts(  # noqa: PLR0917 - FastAPI reads its query from the parameters
        subject_id: SubjectId,
        as_of: Annotated[
            Instant | None, Query(description="Valid time: the facts true then.")
        ] = None,
        believed_at: Annotated[
            Instant | None,
            Query(description="Transaction time: what slotwise believed then."),
        ] = None,
        history: Annotated[Flag, Query(description="Superseded and history facts too.")] = False,
        include_archived: Annotated[Flag, Query(description="The cold tier's too.")] = False,
        after_observation: Annotated[
            str | None,
            Query(min_length=1, max_length=256, description="Wait until it is applied."),
        ] = None,
        wait_s: Annotated[
            float,
            Interval(ge=0, le=30),
            NUMBER,
            Query(description="How long to wait for after_observation."),
        ] = 5.0,
    ) -> Response:
        """The subject's facts: current ones, or as of a valid time or a transaction time."""
        current = state()
        if after_observation is not None:
            timeout = min(wait_s, current.max_wait_s)
            if not await current.reads.wait(subject_id, after_observation, timeout):
                return _problem(
                    409,
                    "not_applied",
                    f"observation {after_observation} is not applied after {timeout:g}s",
                    "after_observation",
                )
        query = FactQuery(as_of, believed_at, history, include_archived)
        found = await current.reads.facts(subject_id, query, via="api")
        return _json(
            {
                "subject_id": subject_id,
                "as_of": as_of.isoformat() if as_of else None,
                "believed_at": believed_at.isoformat() if believed_at else None,
                "history": history,
                "include_archived": include_archived,
                "facts": [_record(f) for f in found],
            }
        )

    @app.get("/v1/subjects/{subject_id:path}/search", tags=["subjects"],
             response_model=SearchPage)  # fmt: skip
    async def search(
        subject_id: SubjectId,
        q: Annotated[
            str,
            Query(
                min_length=1,
                max_length=MAX_QUERY_CHARS,
                # Not blank as str.isspace() has it (ECMA-262's \s differs).
                json_schema_extra={"pattern": _NOT_BLANK},
                description="What to look for; not blank.",
            ),
        ],
        k: Annotated[int, Interval(ge=1, le=MAX_K), WHOLE] = 5,
        include_archived: Flag = False,
    ) -> Response:
        """The subject's facts nearest ``q`` in meaning, within the subject only."""
        hits = await state().reads.search(
            subject_id, q, k=k, query=FactQuery(include_archived=include_archived), via="api"
        )
        return _json(
            {
                "subject_id": subject_id,
                "q": q,
                "hits": [{"score": h.score, "fact": _record(h.fact)} for h in hits],
            }
        )

    def page(subject_id: str, found: LogPage, name: str) -> Response:
        return _json(
            {
                "subject_id": subject_id,
                "partition": found.partition,
                "scanned": found.scanned,
                "complete": found.complete,
                name: [_record(r) for r in found.records],
            }
        )

    @app.get("/v1/subjects/{subject_id:path}/supersessions", tags=["subjects"],
             response_model=SupersessionsPage)  # fmt: skip
    async def supersessions(subject_id: SubjectId, limit: Limit = 50) -> Response:
        """The subject's newest supersession events (committed ones), from its partition."""
        found = await state().reads.supersessions(subject_id, limit=limit)
        return page(subject_id, found, "supersessions")

    @app.get("/v1/subjects/{subject_id:path}/review", tags=["subjects"],
             response_model=ReviewPage)  # fmt: skip
    async def review(subject_id: SubjectId, limit: Limit = 50) -> Response:
        """The subject's newest review items: pairs a human should decide."""
        found = await state().reads.review(subject_id, limit=limit)
        return page(subject_id, found, "items")

    @app.get("/v1/subjects/{subject_id:path}/erasures", tags=["subjects"],
             response_model=ErasuresPage)  # fmt: skip
    async def erasures(subject_id: SubjectId, limit: Limit = 1) -> Response:
        """The subject's newest erasure attestations."""
        found = await state().reads.erasures(subject_id, limit=limit)
        return page(subject_id, found, "attestations")
