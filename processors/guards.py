"""The cascade with the two checks the background jobs need of every write decision.

* **A rejection is remembered.** A human who rejected a held high-stakes
  value against an incumbent has answered that question; the same value
  stated again against the same incumbent is a NOOP, not a new review item.
  Only a REVIEW decision pays for the look (one Redis read).
* **Derived facts are marked.** A decision that supersedes facts also flags,
  in the same atomic write, every current fact derived from them within the
  provenance depth (``processors.provenance``). Only a SUPERSEDE pays for the
  walk (one Redis read per hop, one when nothing was derived).

Both reads happen while deciding, inside the write path's version fence: a
decision computed against a rejection set or a provenance index that moved
is refused by the store and computed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from slotwise.processors.model import Decision, Resolution
from slotwise.processors.ports import FactReader
from slotwise.processors.provenance import DEFAULT_DEPTH, DependentsReader, mark_dependents
from slotwise.processors.review_policy import held_keys, mode
from slotwise.topics.records import CandidateFact

__all__ = ["GuardedCascade", "Rejections", "Resolver"]


class Rejections(Protocol):
    async def rejected(self, subject_id: str, keys: Sequence[str]) -> frozenset[str]:
        """Which of ``keys`` a human rejected in a review of this subject."""
        ...


class Resolver(Protocol):
    """What the write path asks of a cascade (``processors.cascade.Cascade`` and the
    cascades built on it)."""

    async def resolve(
        self, candidate: CandidateFact, *, reader: FactReader | None = None
    ) -> Resolution: ...


class GuardedCascade:
    """A cascade (``inner``) plus the rejection memory and the provenance walk.

    ``facts`` reads what the walk needs when the caller passes no reader.
    """

    def __init__(
        self,
        inner: Resolver,
        facts: FactReader,
        *,
        rejections: Rejections,
        dependents: DependentsReader,
        depth: int = DEFAULT_DEPTH,
    ) -> None:
        self._inner = inner
        self._facts = facts
        self._rejections = rejections
        self._dependents = dependents
        self._depth = depth

    async def resolve(
        self, candidate: CandidateFact, *, reader: FactReader | None = None
    ) -> Resolution:
        resolution = await self._inner.resolve(candidate, reader=reader)
        review = resolution.review
        if review is not None and mode(review) == "held":
            keys = held_keys(candidate, review.incumbent_fact_ids)
            if await self._rejections.rejected(candidate.subject_id, keys):
                said = candidate.value if candidate.value is not None else candidate.text
                return Resolution(
                    decision=Decision.NOOP,
                    candidate=candidate,
                    reason=(
                        f"{resolution.decided_by}: a human rejected {said!r} over "
                        f"{', '.join(review.incumbent_fact_ids)} before; nothing written"
                    ),
                    decided_by=resolution.decided_by,
                )
        retired = tuple(event.old_fact_id for event in resolution.supersessions)
        if not retired:
            return resolution
        marked = await mark_dependents(
            self._dependents,
            reader or self._facts,
            candidate.subject_id,
            retired,
            depth=self._depth,
            written={f.fact_id for f in resolution.facts},
        )
        return replace(resolution, facts=resolution.facts + marked) if marked else resolution
