"""What one background decision writes: the value the lifecycle policies return.

The write path's unit is a :class:`~slotwise.processors.model.Resolution` (one
candidate); the background jobs (consolidation, review decisions,
re-slotting, revalidation) change several facts at once and open or close
review items, so their unit is a :class:`Change`. Like a resolution it is
computed before anything is written, from the state read at the command's
place in the subject's log, and the handler writes it atomically; every id in
it is derived from its inputs, so a replay computes the same change.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from slotwise.processors.model import Resolution, VectorRow, stable_id
from slotwise.topics.records import Fact, ReviewItem, SupersessionEvent

__all__ = ["Change", "fingerprint", "supersession_id"]


def supersession_id(old_fact_id: str, new_fact_id: str) -> str:
    """The event id the write path gives the same supersession (``processors.resolve``)."""
    return stable_id("supersession", old_fact_id, new_fact_id)


def fingerprint(fact: Fact) -> str:
    """What a background proposal was decided against, of one fact.

    The fields that change what the fact claims or whether it still stands;
    a re-confirmation (``last_verified``, counts) leaves it unchanged, so it
    does not void a proposal for nothing.
    """
    return stable_id(
        "fingerprint",
        fact.status,
        fact.superseded_by or "",
        fact.attribute or "",
        repr(fact.value),
        fact.text,
        fact.valid_from.isoformat(),
        fact.valid_to.isoformat() if fact.valid_to else "",
    )


@dataclass(frozen=True, slots=True)
class Change:
    """Facts (full new state, in write order), events, review items (new ones and
    resolution records) and vector rows; ``decision`` and ``reason`` say why."""

    decision: str
    reason: str
    facts: tuple[Fact, ...] = ()
    supersessions: tuple[SupersessionEvent, ...] = ()
    reviews: tuple[ReviewItem, ...] = ()
    vector_rows: tuple[VectorRow, ...] = field(default=())

    @classmethod
    def of(cls, resolution: Resolution, *, reason: str | None = None) -> Change:
        """The change a write-path resolution makes (its review item, if any, included)."""
        return cls(
            decision=resolution.decision.value,
            reason=reason or resolution.reason,
            facts=resolution.facts,
            supersessions=resolution.supersessions,
            reviews=(resolution.review,) if resolution.review is not None else (),
            vector_rows=resolution.vector_rows,
        )

    @property
    def empty(self) -> bool:
        return not (self.facts or self.supersessions or self.reviews or self.vector_rows)

    def plus(self, other: Change) -> Change:
        """Both changes, ``other`` after this one: a later state of a fact replaces an
        earlier one in place, so each fact is written once, in its final state."""
        return Change(
            decision=self.decision if other.empty else other.decision,
            reason=f"{self.reason}; {other.reason}" if self.reason else other.reason,
            facts=_latest(self.facts + other.facts),
            supersessions=self.supersessions + other.supersessions,
            reviews=self.reviews + other.reviews,
            vector_rows=self.vector_rows + other.vector_rows,
        )

    def with_reviews(self, *items: ReviewItem) -> Change:
        return Change(
            self.decision,
            self.reason,
            self.facts,
            self.supersessions,
            self.reviews + items,
            self.vector_rows,
        )

    def fact(self, fact_id: str) -> Fact | None:
        """The state this change leaves ``fact_id`` in, if it writes it."""
        return next((f for f in reversed(self.facts) if f.fact_id == fact_id), None)


def _latest(facts: Iterable[Fact]) -> tuple[Fact, ...]:
    order: dict[str, Fact] = {}
    for fact in facts:
        order[fact.fact_id] = fact
    return tuple(order.values())
