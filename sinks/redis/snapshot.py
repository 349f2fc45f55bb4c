"""What deciding one event reads about its subject, read from Redis in one round trip."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from slotwise.processors.ports import FactReader
from slotwise.topics.records import Fact

__all__ = ["Snapshot"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """``stored`` is the outputs blob of the event if it was applied before (then
    nothing else was read). Otherwise ``own`` is the fact with the id asked for, if
    stored, and ``slot`` the current facts of the attribute asked for. A snapshot is a
    ``slotwise.processors.ports.FactReader``: it answers what it holds and sends any
    other read to the store.
    """

    store: FactReader
    subject_id: str
    version: int
    stored: bytes | None
    own_fact_id: str | None
    own: Fact | None
    attribute: str | None
    slot: tuple[Fact, ...]

    async def current_in_slot(self, subject_id: str, attribute: str) -> list[Fact]:
        if subject_id == self.subject_id and attribute == self.attribute:
            return list(self.slot)
        return await self.store.current_in_slot(subject_id, attribute)

    async def get_facts(self, subject_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        if subject_id == self.subject_id and list(fact_ids) == [self.own_fact_id]:
            return [self.own] if self.own is not None else []
        return await self.store.get_facts(subject_id, fact_ids)
