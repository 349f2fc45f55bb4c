"""``slotwise serve``: the HTTP read API (FastAPI) and, beside it, the inspector page.

Every route under ``/v1/subjects/{subject_id}/`` concerns that one subject and
reads through :class:`~slotwise.streams.read.reads.Reads`, as the CLI and the client
do: ``facts`` (``as_of``, ``believed_at``, ``history``, ``include_archived``,
``after_observation`` to wait for read-your-writes), ``search``,
``supersessions``, ``review``, ``erasures``. ``/v1/schemas/{name}`` serves the
records' JSON Schemas, ``/openapi.json`` the API's own document, ``/healthz``
and ``/metrics`` what a probe and Prometheus read.

The writes (``writes.py``) are POSTs under the subject they touch, in the same
document: observations, candidates, erase, forget, review decisions, and
``/v1/facts/{fact_id}/restore``.

Errors are JSON ``{"error", "message", "field"}``: 422 for a request slotwise
refuses (a subject id a record would refuse, a time without a timezone, a
bound), 401 without a known token, 403 outside the token's subjects or scopes,
404, 409 when the observation waited for is not applied in time, 413 for a
body over the limit, 503 when Redis, Milvus or Kafka fails. Nothing else.

**Access** (``access.py``): loopback by default; with ``SLOTWISE_API_TOKEN``
set (or ``require_token``) every request but ``/healthz`` needs a token, and a
scoped token reaches only its subjects and scopes. The documents answered:
``models.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from annotated_types import Interval
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from slotwise.client.publishing import Publisher
from slotwise.sinks.redis.store import RedisStore
from slotwise.sinks.redis.tokens import Grant, TokenStore
from slotwise.streams.api.access import COOKIE, Forbidden, Gate, ServeRefused, check_bind
from slotwise.streams.api.limits import MAX_BODY_BYTES, BodyLimit
from slotwise.streams.api.models import (
    ErasuresPage,
    FactsPage,
    Problem,
    ReviewPage,
    SchemaName,
    SearchPage,
    SupersessionsPage,
)
from slotwise.streams.api.operations import CommandReviews, read_facts, search_facts
from slotwise.streams.api.params import SubjectId, allowed
from slotwise.streams.api.query import NUMBER, WHOLE, Flag, Instant
from slotwise.streams.api.writes import mount_writes
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import (
    MAX_K,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    FactQuery,
    InvalidQuery,
    Reads,
    ReadUnavailable,
)
from slotwise.streams.read.store import open_store
from slotwise.streams.read.subject_log import LogPage
from slotwise.topics.codec import dumps
from slotwise.topics.contracts import MODELS, load

__all__ = [
    "COOKIE",
    "ReviewDecider",
    "ServeRefused",
    "State",
    "allowed",
    "check_bind",
    "create_app",
]

_NOT_BLANK = r"[^\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"

Limit = Annotated[
    int,
    Interval(ge=1, le=MAX_LIMIT),
    WHOLE,
    Query(description="At most this many, newest first."),
]


class ReviewDecider(Protocol):
    """What a review action does: by default a ``review`` command (``writes.py``)."""

    async def decide(
        self, subject_id: str, review_id: str, action: str, value: str | None = None
    ) -> str: ...


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
        401: "the bearer token is missing or not known",
        403: "the token does not reach this subject, or lacks the scope",
        404: "no such route",
        422: "the request is refused: the message and field say why",
        503: "Redis, Milvus or Kafka failed",
    }.items()
}


# -- the app --------------------------------------------------------------------


@dataclass
class State:
    settings: Settings
    reads: Reads
    max_wait_s: float
    # The inspector's buttons: only when a review action is configured.
    review: ReviewDecider | None
    store: RedisStore
    tokens: TokenStore
    publisher: Publisher


def open_state(  # noqa: PLR0917 - what a server holds
    settings: Settings,
    stack: AsyncExitStack,
    reads: Reads,
    publisher: Publisher,
    max_wait_s: float,
    review: ReviewDecider | None = None,
) -> State:
    """What the routes and the MCP tools share, closed with ``stack``."""
    store = open_store(settings)
    stack.push_async_callback(store.close)
    stack.callback(publisher.close)
    tokens = TokenStore(store, prefix=settings.redis_prefix)
    return State(settings, reads, max_wait_s, review, store, tokens, publisher)


def create_app(
    settings: Settings,
    *,
    token: str | None = None,
    max_wait_s: float = 30.0,
    review: ReviewDecider | None = None,
    reads: Callable[[AsyncExitStack], Reads] | None = None,
    require_token: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> Any:
    """The ASGI app: the API, the inspector page, behind the token gate.

    A token is required when ``token`` is set or ``require_token`` (off loopback);
    otherwise a request without one has every scope, and one with a token is held
    to that token's grant.
    """
    holder: dict[str, State] = {}
    publisher = Publisher(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            opened = reads(stack) if reads else Reads.open(settings, stack)
            holder["state"] = open_state(settings, stack, opened, publisher, max_wait_s, review)
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
    mount_writes(app, state, review or CommandReviews(publisher))
    required = bool(token) or require_token
    if required:
        _document_the_token(app)
    from slotwise.streams.api.inspector import mount  # noqa: PLC0415 - the page is optional weight

    mount(app, state, settings, token_required=required)

    async def lookup(offered: str) -> Grant | None:
        return await state().tokens.lookup(offered)

    gated = Gate(app, token=token, lookup=lookup, required=required)
    return BodyLimit(gated, max_body_bytes)


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
        # Leave out where it came from and a union's member names (capitalized, unlike
        # every field): the field is what the caller can fix.
        where = [
            str(p)
            for p in first.get("loc", ())
            if p not in ("query", "path", "body") and not str(p)[:1].isupper()
        ]
        field = ".".join(where) or None
        return _problem(422, "invalid_request", f"{field or 'request'}: {first['msg']}", field)

    @app.exception_handler(InvalidQuery)
    async def refused(_: Request, exc: InvalidQuery) -> Response:
        return _problem(422, "invalid_request", str(exc), exc.field)

    @app.exception_handler(Forbidden)
    async def forbidden(_: Request, exc: Forbidden) -> Response:
        return _problem(403, "forbidden", str(exc), exc.field)

    @app.exception_handler(ReadUnavailable)
    async def unavailable(_: Request, exc: ReadUnavailable) -> Response:
        return _problem(503, f"{exc.service}_unavailable", str(exc))

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> Response:
        return _problem(exc.status_code, "http_error", str(exc.detail))


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

    @app.get("/v1/subjects/{subject_id:path}/facts", tags=["subjects"],
             dependencies=[allowed("read")], response_model=FactsPage,
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
        found = await read_facts(current, subject_id, query, via="api")
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
             dependencies=[allowed("read")], response_model=SearchPage)  # fmt: skip
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
        hits = await search_facts(
            state(), subject_id, q, k=k, query=FactQuery(include_archived=include_archived),
            via="api",
        )  # fmt: skip
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
             dependencies=[allowed("read")], response_model=SupersessionsPage)  # fmt: skip
    async def supersessions(subject_id: SubjectId, limit: Limit = 50) -> Response:
        """The subject's newest supersession events (committed ones), from its partition."""
        found = await state().reads.supersessions(subject_id, limit=limit)
        return page(subject_id, found, "supersessions")

    @app.get("/v1/subjects/{subject_id:path}/review", tags=["subjects"],
             dependencies=[allowed("read")], response_model=ReviewPage)  # fmt: skip
    async def review(subject_id: SubjectId, limit: Limit = 50) -> Response:
        """The subject's newest review items: pairs a human should decide."""
        found = await state().reads.review(subject_id, limit=limit)
        return page(subject_id, found, "items")

    @app.get("/v1/subjects/{subject_id:path}/erasures", tags=["subjects"],
             dependencies=[allowed("read")], response_model=ErasuresPage)  # fmt: skip
    async def erasures(subject_id: SubjectId, limit: Limit = 1) -> Response:
        """The subject's newest erasure attestations."""
        found = await state().reads.erasures(subject_id, limit=limit)
        return page(subject_id, found, "attestations")
