"""The cascade's ports with their latency recorded: vector fetch, slot match.

The stages stay pure; the wiring wraps the adapters it hands them. The exact
join reads nothing of its own: the write path's one lookup per candidate
(stage ``lookup``) brings its slot.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence

from slotwise.processors.model import Neighbour, SlotAnswer
from slotwise.processors.ports import SlotMatcher, VectorSearch
from slotwise.streams.runtime.metrics import STAGE_SECONDS
from slotwise.topics.records import CandidateFact

__all__ = ["TimedMatcher", "TimedSearch"]


class TimedSearch:
    def __init__(self, inner: VectorSearch) -> None:
        self._inner = inner

    async def nearest(
        self,
        subject_id: str,
        text: str,
        *,
        k: int,
        floor: float,
        exclude: Collection[str] = (),
    ) -> list[tuple[str, float]]:
        started = time.perf_counter()
        try:
            return await self._inner.nearest(subject_id, text, k=k, floor=floor, exclude=exclude)
        finally:
            STAGE_SECONDS.labels("vector_fetch").observe(time.perf_counter() - started)


class TimedMatcher:
    def __init__(self, inner: SlotMatcher) -> None:
        self._inner = inner

    async def match(self, candidate: CandidateFact, neighbours: Sequence[Neighbour]) -> SlotAnswer:
        started = time.perf_counter()
        try:
            return await self._inner.match(candidate, neighbours)
        finally:
            STAGE_SECONDS.labels("slot_match").observe(time.perf_counter() - started)
