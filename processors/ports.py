"""The ports the stages and the write path depend on.

``sinks/`` implements the stores (Redis, Milvus), ``models/`` the model and
embedding providers; ``processors/testing.py`` has an in-memory version of each.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Protocol

from slotwise.processors.model import ApplyOutcome, Neighbour, SlotAnswer, VectorRow
from slotwise.topics.records import CandidateFact, Command, Fact, Observation

__all__ = [
    "Embedder",
    "Extractor",
    "FactReader",
    "SlotMatcher",
    "StateStore",
    "SubjectSnapshot",
    "VectorSearch",
    "VectorSink",
]


class Extractor(Protocol):
    async def extract(self, observation: Observation) -> Sequence[CandidateFact | Command]:
        """Facts about the observation's subject, and the commands the turn asks for.

        No fact for questions, hypotheticals and third parties. A command is a
        request the subject made of their memory ("forget where I live": an
        ``erase``), with an id derived from the observation so a re-extraction
        emits the same one.
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
        self,
        subject_id: str,
        text: str,
        *,
        k: int,
        floor: float,
        exclude: Collection[str] = (),
    ) -> list[tuple[str, float]]:
        """Up to ``k`` ``(fact_id, cosine)`` of this subject only, best first, cosine ≥ floor,
        none of ``exclude`` (ranked as if those rows were not in the index)."""
        ...


class SubjectSnapshot(FactReader, Protocol):
    """What deciding one event read about its subject, in one round trip.

    ``stored`` is the outputs the event left when it was applied before (a
    replay): then nothing else need be read. As a :class:`FactReader` it answers
    from what it holds and reads anything else from the store.
    """

    @property
    def version(self) -> int: ...

    @property
    def stored(self) -> bytes | None: ...


class StateStore(Protocol):
    """The subject state the write path reads and changes, one event at a time."""

    async def snapshot(
        self,
        subject_id: str,
        event_id: str | None = None,
        *,
        own_fact_id: str | None = None,
        attribute: str | None = None,
    ) -> SubjectSnapshot:
        """The subject's version, the event's stored outputs, one fact and one slot."""
        ...

    async def apply(
        self,
        subject_id: str,
        event_id: str,
        *,
        expected_version: int,
        facts: Sequence[Fact],
        outputs: bytes,
        observation_id: str | None = None,
        now: datetime,
    ) -> ApplyOutcome:
        """Write one event's facts, outputs and watermark at once, or nothing: nothing
        when ``event_id`` was applied before (its stored outputs come back) or the
        subject is no longer at ``expected_version`` (stale: decide again)."""
        ...


class VectorSink(Protocol):
    """Buffers vector rows and makes them searchable at the checkpoint."""

    def add(self, rows: Iterable[VectorRow]) -> None:
        """Buffer rows for the next :meth:`flush`; a later row of a fact replaces it."""
        ...

    async def flush(self) -> None:
        """Write every buffered row, or raise and keep them (the commit waits)."""
        ...
