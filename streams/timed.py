"""The cascade's ports with their latency recorded: exact join, vector fetch, slot match.

The stages stay pure; the wiring wraps the adapters it hands them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from processors.model import Neighbour, SlotAnswer
from processors.ports import FactReader, SlotMatcher, VectorSearch
from streams.metrics import STAGE_SECONDS
from topics.records import CandidateFact, Fact

__all__ = ["TimedMatcher", "TimedReader", "TimedSearch"]


class TimedReader:
    def __init__(self, inner: FactReader) -> None:
        self._inner = inner

    async def current_in_slot(self, subject_id: str, attribute: str) -> list[Fact]:
        started = time.perf_counter()
        try:
            return await self._inner.current_in_slot(subject_id, attribute)
        finally:
            STAGE_SECONDS.labels("exact_join").observe(time.perf_counter() - started)

    async def get_facts(self, subject_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        return await self._inner.get_facts(subject_id, fact_ids)


class TimedSearch:
    def __init__(self, inner: VectorSearch) -> None:
        self._inner = inner

    async def nearest(
        self, subject_id: str, text: str, *, k: int, floor: float
    ) -> list[tuple[str, float]]:
        started = time.perf_counter()
        try:
            return await self._inner.nearest(subject_id, text, k=k, floor=floor)
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
