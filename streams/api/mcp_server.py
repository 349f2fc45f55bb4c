"""``slotwise mcp``: the memory as Model Context Protocol tools, on the official ``mcp`` SDK.

Six tools (``add_memory``, ``search_memories``, ``get_facts``, ``delete_memory``,
``list_reviews``, ``resolve_review``) and a resource (``memory://facts/current``, the
subject's current facts, for a client to pin into a prompt; ``…/history`` too). They do
what the HTTP API does, through the same code (:mod:`slotwise.streams.api.operations`,
:class:`~slotwise.streams.read.reads.Reads`).

**The subject is never a tool argument.** Over stdio it is the one the server was
started for (``--subject``). Over streamable HTTP it comes from the caller's bearer
token: a token made for one subject (``--subjects =ID``) binds it; a token that
reaches more names it with the ``X-Slotwise-Subject`` header, set in the client's
configuration, not by the model, and checked against the token. So a prompt that
talks a model into "read user-43's memory" has no argument to put it in, and a
token for user-42 cannot reach user-43. Each tool also needs its scope (``write``
to add, ``read`` to search, read facts and list reviews, ``erase`` to delete,
``review`` to resolve); a refusal, like any bad argument, is a tool error the model
reads, never a crash.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from pydantic import Field

from slotwise.client.exceptions import ClientError
from slotwise.client.publishing import Publisher
from slotwise.sinks.exceptions import SinkError
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.tokens import Grant, Scope
from slotwise.streams.api.access import Forbidden, require
from slotwise.streams.api.bodies import ObservationIn, When
from slotwise.streams.api.operations import (
    CommandReviews,
    check_texts,
    erase,
    observation,
    read_facts,
    search_facts,
    write_records,
)
from slotwise.streams.api.serve import State, open_state
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import FactQuery, ReadError, Reads
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Fact

__all__ = ["SUBJECT_HEADER", "Binding", "build_server"]

SUBJECT_HEADER = "x-slotwise-subject"
FACTS_URI = "memory://facts/{view}"
T = TypeVar("T")


@dataclass(frozen=True)
class Binding:
    """How a call finds its subject: ``subject`` fixed (stdio), else from the caller's token."""

    subject: str | None = None
    # SLOTWISE_API_TOKEN: every subject and scope, the subject from the header.
    static_token: str | None = None


def _fact(fact: Fact) -> dict[str, Any]:
    """What a model needs of a fact (the full record is the HTTP API's)."""
    return {
        "fact_id": fact.fact_id,
        "attribute": fact.attribute,
        "value": fact.value,
        "text": fact.text,
        "status": fact.status,
        "valid_from": fact.valid_from.isoformat() if fact.valid_from else None,
        "valid_to": fact.valid_to.isoformat() if fact.valid_to else None,
        "recorded_at": fact.recorded_at.isoformat(),
    }


def build_server(  # noqa: PLR0915 - one closure per tool, sharing the binding
    settings: Settings, binding: Binding, *, max_wait_s: float = 30.0
) -> MCPServer:
    """The MCP server for one deployment; run it over stdio or mount its HTTP app."""
    held: dict[str, State] = {}

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            reads = Reads.open(settings, stack)
            held["state"] = open_state(settings, stack, reads, Publisher(settings), max_wait_s)
            yield

    server = MCPServer(
        "slotwise",
        instructions=(
            "Long-term memory about one user (the subject this connection is bound to). "
            "Search or read facts before answering questions about the user; add what the "
            "user tells you about themselves with add_memory; delete_memory when they ask "
            "you to forget something."
        ),
        lifespan=lifespan,
    )

    async def bound(ctx: Context, scope: Scope) -> tuple[State, str]:
        state = held["state"]
        subject, grant = await _caller(state, binding, ctx)
        require(grant, scope, subject)
        return state, subject

    async def call(ctx: Context, scope: Scope, use: Callable[[State, str], Awaitable[T]]) -> T:
        try:
            state, subject = await bound(ctx, scope)
            return await use(state, subject)
        except (Forbidden, ClientError, ReadError, SinkError, SlotwiseError) as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(
        description=(
            "Remember what the user said or what you observed about them. The memory "
            "extracts facts from the text and keeps them current: a new value supersedes "
            "the old one. With wait=true, returns once it is applied, with the decisions "
            "(ADD, UPDATE, SUPERSEDE, NOOP, REVIEW), the facts written and any supersession."
        )
    )
    async def add_memory(
        text: Annotated[str, Field(min_length=1, description="The user's words or a note.")],
        ctx: Context,
        observed_at: Annotated[
            When | None, Field(description="When it was said (RFC 3339); now if omitted.")
        ] = None,
        session_id: Annotated[str | None, Field(max_length=256)] = None,
        wait: Annotated[bool, Field(description="Wait until it is applied.")] = False,
    ) -> dict[str, Any]:
        async def use(state: State, subject: str) -> dict[str, Any]:
            body = ObservationIn(text=text, observed_at=observed_at, session_id=session_id)
            record = observation(subject, body, datetime.now(UTC), None)
            check_texts(state.settings.max_text_bytes, [record], None)
            written = await write_records(
                state, subject, [record], [record.observation_id], state.max_wait_s if wait else 0
            )
            return {**written["written"][0], "after_observation": written["after_observation"]}

        return await call(ctx, "write", use)

    @server.tool(
        description=(
            "Search the user's memory by meaning; returns their current facts nearest the "
            "query, best first, with a similarity score."
        )
    )
    async def search_memories(
        query: Annotated[str, Field(min_length=1, max_length=2000, description="What to find.")],
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=50, description="How many facts at most.")] = 5,
        include_archived: Annotated[
            bool, Field(description="Also search facts archived by forgetting.")
        ] = False,
    ) -> dict[str, Any]:
        async def use(state: State, subject: str) -> dict[str, Any]:
            scope = FactQuery(include_archived=include_archived)
            hits = await search_facts(state, subject, query, k=k, query=scope, via="mcp")
            return {"hits": [{"score": h.score, **_fact(h.fact)} for h in hits]}

        return await call(ctx, "read", use)

    @server.tool(
        description=(
            "The user's facts: current ones by default; as_of for what was true at a time, "
            "believed_at for what the memory believed at a time, history for superseded "
            "facts too; attribute to keep one slot (e.g. employer, home_city)."
        )
    )
    async def get_facts(
        ctx: Context,
        attribute: Annotated[str | None, Field(max_length=256)] = None,
        as_of: When | None = None,
        believed_at: When | None = None,
        history: bool = False,
    ) -> dict[str, Any]:
        async def use(state: State, subject: str) -> dict[str, Any]:
            found = await read_facts(state, subject, FactQuery(as_of, believed_at, history), "mcp")
            kept = [f for f in found if attribute is None or f.attribute == attribute]
            return {"facts": [_fact(f) for f in kept]}

        return await call(ctx, "read", use)

    @server.tool(
        description=(
            "Erase one fact (fact_id) or every fact of one attribute from every store, when "
            "the user asks you to forget it. Give exactly one. Returns the erasure "
            "attestation once the deletion is verified."
        )
    )
    async def delete_memory(
        ctx: Context,
        fact_id: Annotated[str | None, Field(min_length=1, max_length=256)] = None,
        attribute: Annotated[str | None, Field(min_length=1, max_length=256)] = None,
    ) -> dict[str, Any]:
        if (fact_id is None) == (attribute is None):
            raise ToolError("give exactly one of fact_id or attribute")

        async def use(state: State, subject: str) -> dict[str, Any]:
            reason = "asked of the agent (MCP delete_memory)"
            return await erase(state, subject, fact_id, attribute, reason, state.max_wait_s)

        return await call(ctx, "erase", use)

    @server.tool(
        description=(
            "Open review items: changes the memory did not apply on its own and holds for "
            "a decision (a conflicting value, a high-stakes change)."
        )
    )
    async def list_reviews(ctx: Context) -> dict[str, Any]:
        async def use(state: State, subject: str) -> dict[str, Any]:
            reviews = RedisReviews(state.store, prefix=state.settings.redis_prefix)
            items = await reviews.open_items(subject)
            return {"items": [i.model_dump(mode="json") for i in items]}

        return await call(ctx, "read", use)

    @server.tool(
        description=(
            "Decide an open review item: accept its proposal, reject it (keep what is "
            "stored), or edit (store value instead)."
        )
    )
    async def resolve_review(
        review_id: Annotated[str, Field(min_length=1, max_length=256)],
        action: Literal["accept", "reject", "edit"],
        ctx: Context,
        value: Annotated[str | None, Field(description="With edit: the value to store.")] = None,
    ) -> dict[str, Any]:
        if action == "edit" and value is None:
            raise ToolError("edit needs the value to store")

        async def use(state: State, subject: str) -> dict[str, Any]:
            reviews = RedisReviews(state.store, prefix=state.settings.redis_prefix)
            if await reviews.get(subject, review_id) is None:
                raise ToolError(f"no review item {review_id} for this user")
            decided = await CommandReviews(state.publisher).decide(
                subject, review_id, action, value
            )
            return {"review_id": review_id, "action": action, "command_id": decided}

        return await call(ctx, "review", use)

    @server.resource(
        FACTS_URI,
        name="facts",
        description=(
            "The user's facts, to pin into a prompt: memory://facts/current (what is true "
            "now) or memory://facts/history (superseded facts too)."
        ),
        mime_type="application/json",
    )
    async def facts_resource(view: str, ctx: Context) -> dict[str, Any]:
        if view not in ("current", "history"):
            raise ResourceNotFoundError(f"memory://facts/{view}: current or history")

        async def use(state: State, subject: str) -> dict[str, Any]:
            query = FactQuery(history=view == "history")
            found = await read_facts(state, subject, query, "mcp")
            return {"facts": [_fact(f) for f in found]}

        try:
            return await call(ctx, "read", use)
        except ToolError as exc:
            raise ResourceError(str(exc)) from exc

    return server


async def _caller(state: State, binding: Binding, ctx: Context) -> tuple[str, Grant]:
    """The subject and grant of this call: the server's, or the bearer token's."""
    if binding.subject is not None:
        return binding.subject, Grant("exact", binding.subject, Grant.everything().scopes)
    headers = {k.lower(): v for k, v in (ctx.headers or {}).items()}
    scheme, _, offered = headers.get("authorization", "").partition(" ")
    offered = offered.strip()
    if scheme.lower() != "bearer" or not offered:
        raise Forbidden("a bearer token is required")
    if binding.static_token and secrets.compare_digest(offered, binding.static_token):
        grant: Grant | None = Grant.everything()
    else:
        grant = await state.tokens.lookup(offered)
    if grant is None:
        raise Forbidden("the bearer token is not known")
    # A header naming another subject than the token's is refused by the scope check.
    subject = headers.get(SUBJECT_HEADER) or grant.single_subject
    if not subject:
        raise Forbidden(f"this token reaches several subjects: name one with {SUBJECT_HEADER}")
    return subject, grant
