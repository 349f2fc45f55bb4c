"""The built-in demo conversation: one user, every decision the write path can make."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from slotwise.processors.model import stable_id
from slotwise.topics.records import Observation

__all__ = ["DEMO_TURNS", "DemoTurn", "observations"]


@dataclass(frozen=True, slots=True)
class DemoTurn:
    text: str
    observed_at: datetime
    expect: tuple[str, ...]
    """The decision for each fact the turn yields (empty: no fact about the user)."""


def _at(day: str, hour: int = 10, minute: int = 0) -> datetime:
    year, month, dom = (int(x) for x in day.split("-"))
    return datetime(year, month, dom, hour, minute, tzinfo=UTC)


DEMO_TURNS: tuple[DemoTurn, ...] = (
    DemoTurn("Hi! My name is Ana Souza.", _at("2026-03-02", 9, 0), ("ADD",)),
    DemoTurn("I'm a backend engineer at Datadog.", _at("2026-03-02", 9, 1), ("ADD", "ADD")),
    DemoTurn("Our main database is Postgres.", _at("2026-03-02", 9, 2), ("ADD",)),
    DemoTurn("I live in Lisbon.", _at("2026-03-02", 9, 3), ("ADD",)),
    DemoTurn("My email is ana@example.com.", _at("2026-03-02", 9, 4), ("ADD",)),
    DemoTurn("I speak Portuguese.", _at("2026-03-02", 9, 5), ("ADD",)),
    DemoTurn("My sister lives in Paris.", _at("2026-03-05"), ()),
    DemoTurn("I might move to Berlin.", _at("2026-03-05", 10, 1), ()),
    DemoTurn(
        "We switched our database from Postgres to MySQL last week.",
        _at("2026-03-10"),
        ("SUPERSEDE",),
    ),
    DemoTurn("My email is ana@example.com.", _at("2026-03-10", 10, 1), ("NOOP",)),
    DemoTurn("I start at Stripe on Monday.", _at("2026-03-14"), ("SUPERSEDE",)),
    DemoTurn("My name is Ana Souza.", _at("2026-03-14", 10, 1), ("NOOP",)),
    DemoTurn("I work at Stripe on the payments team.", _at("2026-03-20"), ("UPDATE",)),
    DemoTurn("I also speak Spanish.", _at("2026-03-20", 10, 1), ("ADD",)),
    DemoTurn("I'm allergic to peanuts.", _at("2026-03-21"), ("ADD",)),
    DemoTurn("I visited Lisbon in March.", _at("2026-04-02"), ("ADD",)),
    DemoTurn("My email is ana.souza@newmail.org.", _at("2026-04-03"), ("REVIEW",)),
    DemoTurn("Do you know any good cafés in Lisbon?", _at("2026-04-03", 10, 1), ()),
)


def observations(subject_id: str, session_id: str = "demo") -> list[Observation]:
    return [
        Observation(
            observation_id=stable_id("demo", subject_id, str(i)),
            subject_id=subject_id,
            session_id=session_id,
            speaker="user",
            text=turn.text,
            observed_at=turn.observed_at,
            source="chat",
        )
        for i, turn in enumerate(DEMO_TURNS)
    ]
