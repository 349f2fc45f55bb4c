"""The one apply loop: a replay reads back, a stale version decides again, then gives up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from slotwise.processors.testing import InMemoryState
from slotwise.streams.runtime.errors import StateMoved
from slotwise.streams.write.fenced import MAX_STALE_RETRIES, Applied, Decided, apply_fenced
from slotwise.streams.write.outputs import StoredOutputs

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def _decision(reason: str) -> Decided:
    return Decided((), StoredOutputs.of((), decision="NOOP", reason=reason))


async def _apply(
    store: InMemoryState, decide: Callable[[Any], Awaitable[Decided]]
) -> Applied[Decided]:
    return await apply_fenced(
        store, "u", "e1", snapshot=lambda: store.snapshot("u", "e1"), decide=decide, now=lambda: NOW
    )


def test_a_fresh_event_is_decided_once_and_a_replay_reads_its_outputs_back() -> None:
    store = InMemoryState()
    calls: list[int] = []

    async def decide(seen: object) -> Decided:
        calls.append(1)
        return _decision("first")

    async def run() -> tuple[Applied[Decided], Applied[Decided]]:
        first = await _apply(store, decide)
        again = await _apply(store, decide)
        return first, again

    first, again = asyncio.run(run())
    assert first.decided is not None and first.outputs.reason == "first"
    assert again.decided is None and again.outputs.reason == "first"
    assert len(calls) == 1


def test_a_write_landing_between_snapshot_and_apply_makes_it_decide_again() -> None:
    store = InMemoryState()
    seen_versions: list[int] = []

    async def decide(seen: object) -> Decided:
        version = seen.version  # type: ignore[attr-defined]
        seen_versions.append(version)
        if len(seen_versions) == 1:  # another writer moves the subject under this decision
            await store.apply(
                "u", "other", expected_version=version, facts=(), outputs=b"{}", now=NOW
            )
        return _decision(f"at {version}")

    applied = asyncio.run(_apply(store, decide))
    assert seen_versions == [0, 1]
    assert applied.outputs.reason == "at 1"
    assert store.stale_answers == 1


def test_a_subject_that_never_stops_moving_raises_state_moved_after_the_limit() -> None:
    store = InMemoryState()

    async def decide(seen: object) -> Decided:
        version = seen.version  # type: ignore[attr-defined]
        await store.apply(
            "u", f"other-{version}", expected_version=version, facts=(), outputs=b"{}", now=NOW
        )
        return _decision("never")

    with pytest.raises(StateMoved, match="kept changing"):
        asyncio.run(_apply(store, decide))
    assert store.stale_answers == MAX_STALE_RETRIES
