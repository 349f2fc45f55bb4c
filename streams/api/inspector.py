"""The memory inspector: one subject's memory as a page, for the people who own it.

Served by ``slotwise serve`` at ``/inspector``: find a subject, search its
memory by meaning, see its current facts, its history as a timeline per slot
with the supersession chains linked both ways, the supersession events, the
review items, and the last erasure attestation. Server-rendered (Jinja2, no
script, no build step), read-only unless a review action is configured, when
each review item gets accept and reject buttons.

It reads through the same :class:`~slotwise.streams.read.reads.Reads` as the API
(``via="inspector"``). A part that cannot be read (Kafka away) says so in its
section; the rest of the page still shows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qs, quote

from fastapi import FastAPI, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from slotwise.streams.api.access import grant_of, require
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import FactQuery, InvalidQuery, ReadError, check_subject
from slotwise.streams.read.subject_log import LogPage
from slotwise.topics.records import Fact

if TYPE_CHECKING:
    from slotwise.streams.api.serve import State

__all__ = ["Slot", "mount", "timeline"]

_FREE_TEXT = "(free text)"


@dataclass
class Slot:
    """One slot's facts, oldest first, for the timeline."""

    name: str
    facts: list[Fact] = field(default_factory=list)

    @property
    def current(self) -> int:
        return sum(1 for f in self.facts if f.status == "current")


def timeline(facts: Sequence[Fact]) -> list[Slot]:
    """Facts grouped by slot (attribute), each slot oldest first; free text last."""
    slots: dict[str, Slot] = {}
    for fact in sorted(facts, key=lambda f: (f.valid_from, f.recorded_at, f.fact_id)):
        name = fact.attribute or _FREE_TEXT
        slots.setdefault(name, Slot(name)).facts.append(fact)
    return sorted(slots.values(), key=lambda s: (s.name == _FREE_TEXT, s.name))


def shown(fact: Fact) -> str:
    return fact.text if fact.value is None else str(fact.value)


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("slotwise.streams.api", "templates"),
        autoescape=select_autoescape(default=True),
        undefined=StrictUndefined,
    )
    env.filters["shown"] = shown
    env.filters["short"] = lambda fact_id: (fact_id or "")[:8]
    env.filters["when"] = lambda t: t.strftime("%Y-%m-%d %H:%M") if t else "…"
    env.filters["url"] = lambda text: quote(str(text), safe="")
    return env


async def _logged(read: Any) -> LogPage | str:
    """A log read, or the reason it failed (the section says it)."""
    try:
        page: LogPage = await read
    except ReadError as exc:
        return str(exc)
    return page


def mount(
    app: FastAPI, state: Callable[[], State], settings: Settings, *, token_required: bool
) -> None:
    env = _environment()

    def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("namespace", settings.namespace or settings.topic_prefix)
        html = env.get_template(name).render(**context)
        return HTMLResponse(html, status_code=status)

    @app.get("/", include_in_schema=False)
    async def root() -> Response:
        return RedirectResponse("/inspector", status_code=303)

    @app.get("/inspector", include_in_schema=False)
    async def home(subject: str | None = None, q: str | None = None) -> Response:
        if subject:
            target = f"/inspector/subjects/{quote(subject, safe='')}"
            return RedirectResponse(target + (f"?q={quote(q)}" if q else ""), status_code=303)
        return render("home.html")

    @app.get("/inspector/subjects/{subject_id:path}", include_in_schema=False)
    async def subject(
        subject_id: Annotated[str, Path(max_length=256)],
        q: Annotated[str | None, Query(max_length=2000)] = None,
    ) -> Response:
        try:
            check_subject(subject_id)
        except InvalidQuery as exc:
            return render("home.html", status=422, error=str(exc))
        reads = state().reads
        facts = await reads.facts(subject_id, FactQuery(history=True), via="inspector")
        hits: list[Any] | str = []
        if q and q.strip():
            try:
                hits = await reads.search(subject_id, q, k=5, via="inspector")
            except ReadError as exc:
                hits = str(exc)
        events, review, erasures = await asyncio.gather(
            _logged(reads.supersessions(subject_id, limit=20)),
            _logged(reads.review(subject_id, limit=20)),
            _logged(reads.erasures(subject_id, limit=1)),
        )
        return render(
            "subject.html",
            subject_id=subject_id,
            q=q or "",
            hits=hits,
            current=[f for f in facts if f.status == "current"],
            slots=timeline(facts),
            events=events,
            review=review,
            erasure=erasures,
            by_id={f.fact_id: f for f in facts},
            review_actions=state().review is not None,
        )

    @app.post("/inspector/subjects/{subject_id:path}/review/{review_id}", include_in_schema=False)
    async def decide(subject_id: str, review_id: str, request: Request) -> Response:
        decider = state().review
        action = parse_qs((await request.body()).decode("utf-8", "replace")).get("action", [""])[0]
        if decider is None or action not in ("accept", "reject"):
            return render("home.html", status=422, error="no such review action")
        check_subject(subject_id)
        require(grant_of(request.scope), "review", subject_id)
        await decider.decide(subject_id, review_id, action)
        return RedirectResponse(
            f"/inspector/subjects/{quote(subject_id, safe='')}?decided={quote(review_id)}",
            status_code=303,
        )

    @app.get("/inspector/login", include_in_schema=False)
    async def login_form() -> Response:
        return render("login.html", token_required=token_required)

    @app.post("/inspector/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        token = parse_qs((await request.body()).decode("utf-8", "replace")).get("token", [""])[0]
        from slotwise.streams.api.serve import COOKIE  # noqa: PLC0415 - serve imports this module

        answer = RedirectResponse("/inspector", status_code=303)
        # Checked by the token gate on the next request; HttpOnly and same-site only, so
        # no script reads it and no other site's form can post with it.
        answer.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return answer
