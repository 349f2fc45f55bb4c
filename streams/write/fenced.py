"""The one apply loop: snapshot → decide → apply at the read version → again if stale.

Every change to a subject — a candidate's decision, an observation's
watermark, a background command (review, consolidation, re-slotting, forget,
restore) — goes through :func:`apply_fenced`:

1. snapshot the subject at the event (one round trip); if the event was
   applied before (a replay), its stored outputs come back and nothing is
   decided again;
2. decide: a function of that snapshot alone, so a replay decides the same;
3. write the facts and the outputs in one store call, idempotent by the
   event's id and fenced by the version the snapshot read;
4. a stale version means another write landed in between (a zombie worker
   after a rebalance, a pass racing the log): read again and decide again, at
   most :data:`MAX_STALE_RETRIES` times, then :class:`StateMoved`, which the
   worker's retry policy retries as a transient failure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Protocol, TypeVar

from slotwise.processors.ports import StateStore, SubjectSnapshot
from slotwise.streams.runtime.errors import StateMoved
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.records import Fact

__all__ = ["MAX_STALE_RETRIES", "Applied", "Decided", "Decision", "apply_fenced"]

# A subject rarely moves twice under one event; eight times means something else keeps
# writing it, and the worker's retry policy should take over.
MAX_STALE_RETRIES = 8


class Decision(Protocol):
    """What one decision writes: its facts, and the outputs stored with them."""

    @property
    def facts(self) -> Sequence[Fact]: ...

    @property
    def outputs(self) -> StoredOutputs: ...


D = TypeVar("D", bound=Decision)
S = TypeVar("S", bound=SubjectSnapshot)


@dataclass(frozen=True, slots=True)
class Decided:
    """A decision and nothing more (a caller needing more keeps its own :class:`Decision`)."""

    facts: Sequence[Fact]
    outputs: StoredOutputs


@dataclass(frozen=True, slots=True)
class Applied(Generic[D]):
    """The event's outputs, and the decision when it was made now (``None``: read back)."""

    outputs: StoredOutputs
    decided: D | None


async def apply_fenced(
    store: StateStore,
    subject_id: str,
    event_id: str,
    *,
    snapshot: Callable[[], Awaitable[S]],
    decide: Callable[[S], Awaitable[D]],
    now: Callable[[], datetime],
    observation_id: str | None = None,
    around_apply: Callable[[], AbstractContextManager[None]] = nullcontext,
) -> Applied[D]:
    """Apply one event to its subject (see the module docstring)."""
    for _ in range(MAX_STALE_RETRIES):
        seen = await snapshot()
        if seen.stored is not None:
            return Applied(StoredOutputs.decode(seen.stored), None)
        decided = await decide(seen)
        with around_apply():
            outcome = await store.apply(
                subject_id,
                event_id,
                expected_version=seen.version,
                facts=decided.facts,
                outputs=decided.outputs.encode(),
                observation_id=observation_id,
                now=now(),
            )
        if outcome.stale:
            continue
        if outcome.stored is not None:
            return Applied(StoredOutputs.decode(outcome.stored), None)
        return Applied(decided.outputs, decided)
    raise StateMoved(f"subject {subject_id!r} kept changing while applying {event_id}")
