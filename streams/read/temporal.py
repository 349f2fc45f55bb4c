"""Which facts a read returns: now, at a valid time (``as_of``), at a transaction time.

A fact is bi-temporal. Its *valid* interval ``[valid_from, valid_to)`` is when
it was true in the world (``valid_to`` open while it still is); its
``recorded_at`` is when slotwise learned it (the Kafka timestamp of the
candidate, so a rebuild from the log gives the same instants).

* **the present** — the current facts; with ``history`` every fact
  (superseded and out-of-order history too).
* **as_of=t** — "what was true at t", as slotwise knows it now: every fact
  whose valid interval contains t (``valid_from ≤ t < valid_to``), whatever
  its status now. A fact that turned out to be superseded later was still true
  during its interval.
* **believed_at=t** — "what slotwise believed at t": the facts recorded by t
  (``recorded_at ≤ t``), each with the status it had then. A fact superseded
  *after* t was still current at t: a supersession happened when its
  superseding fact was recorded, so a fact whose ``superseded_by`` was recorded
  after t reads as current, open-ended, unlinked. Only current-at-t facts are
  returned unless ``history`` is asked for.
* both — "what slotwise believed at t2 was true at t1": the state at t2, then
  its facts valid at t1.

Archived facts (the forgetting pass's cold tier) are left out unless
``include_archived``. Erased facts are gone from the store and never appear.

What the reconstruction cannot know: a fact's *content* at t. An UPDATE that
merged detail into a fact, or a NOOP that re-confirmed it, rewrote the fact in
place, so a ``believed_at`` read shows each fact's latest text, confidence and
``last_verified``. Likewise an archived fact is reported archived even at an
instant before it was archived (the archive time is not recorded yet).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from slotwise.topics.records import Fact

__all__ = ["FactQuery", "as_of", "believed_at", "order", "select"]


@dataclass(frozen=True, slots=True)
class FactQuery:
    """What a read of one subject's facts asks for (see the module docstring)."""

    as_of: datetime | None = None
    believed_at: datetime | None = None
    history: bool = False
    include_archived: bool = False

    @property
    def present(self) -> bool:
        """Only the current facts: what the store's slot index answers on its own."""
        return not (self.as_of or self.believed_at or self.history or self.include_archived)


def as_of(facts: Iterable[Fact], instant: datetime) -> list[Fact]:
    """The facts whose valid interval contains ``instant``."""
    return [
        f for f in facts if f.valid_from <= instant and (f.valid_to is None or instant < f.valid_to)
    ]


def believed_at(facts: Sequence[Fact], instant: datetime) -> list[Fact]:
    """Every fact recorded by ``instant``, with the status and links it had then."""
    recorded = {f.fact_id: f.recorded_at for f in facts}
    then: list[Fact] = []
    for fact in facts:
        if fact.recorded_at > instant:
            continue
        successor = fact.superseded_by
        if fact.status == "superseded" and successor is not None:
            # An erased successor leaves no time: the supersession stands.
            superseded_at = recorded.get(successor)
            if superseded_at is not None and superseded_at > instant:
                then.append(
                    fact.model_copy(
                        update={"status": "current", "valid_to": None, "superseded_by": None}
                    )
                )
                continue
        then.append(fact)
    return then


def select(facts: Sequence[Fact], query: FactQuery) -> list[Fact]:
    """The facts ``query`` asks for among every stored fact of one subject, in reading order."""
    chosen: list[Fact] = list(facts)
    if query.believed_at is not None:
        chosen = believed_at(chosen, query.believed_at)
    if query.as_of is not None:
        chosen = as_of(chosen, query.as_of)
    elif not query.history:
        wanted = {"current", "archived"} if query.include_archived else {"current"}
        chosen = [f for f in chosen if f.status in wanted]
    if not query.include_archived:
        chosen = [f for f in chosen if f.status != "archived"]
    return order(chosen)


def order(facts: Iterable[Fact]) -> list[Fact]:
    """By attribute (unslotted facts last), then valid_from: the order every read shows."""
    return sorted(
        facts, key=lambda f: (f.attribute is None, f.attribute or "", f.valid_from, f.fact_id)
    )
