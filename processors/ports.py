"""The ports the stages depend on. ``sinks/`` and ``streams/`` implement them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from processors.model import Neighbour, SlotAnswer
from topics.records import CandidateFact, Fact, Observation

__all__ = ["Embedder", "Extractor", "FactReader", "SlotMatcher", "VectorSearch"]


class Extractor(Protocol):
    async def extract(self, observation: Observation) -> list[CandidateFact]:
        """Facts about the observation's subject.

        None for questions, hypotheticals and third parties.
        """
        ...


class SlotMatcher(Protocol):
    async def match(self, candidate: CandidateFact, neighbours: Sequence[Neighbour]) -> SlotAnswer:
        """Which numbered neighbour, if any, fills the candidate's slot."""
        ...


class Embedder(Protocol):
    @property
    def model_name(self) -> str:
        """Name and version stamped on every vector, e.g. ``all-MiniLM-L6-v2``."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalised vectors, one per text (CPU-bound: call it off the event loop)."""
        ...


class FactReader(Protocol):
    async def current_in_slot(self, subject_id: str, attribute: str) -> list[Fact]:
        """Current facts filling ``(subject_id, attribute)``: the exact key join."""
        ...

    async def get_facts(self, subject_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        """The facts of this subject with these ids (unknown ids are left out)."""
        ...


class VectorSearch(Protocol):
    async def nearest(
        self, subject_id: str, text: str, *, k: int, floor: float
    ) -> list[tuple[str, float]]:
        """Up to ``k`` ``(fact_id, cosine)`` of this subject only, best first, cosine ≥ floor."""
        ...
