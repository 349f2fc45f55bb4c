"""In-memory implementations of the ports, for tests and benchmarks.

They keep the contracts of the real stores, so a test that passes here
exercises the same decisions the worker makes:

* ``InMemoryFacts`` — a ``FactReader``; ``apply(resolution)`` stores what a
  resolution writes, so cascades can be chained.
* ``InMemoryState`` — a ``StateStore``: per-subject versions, idempotency by
  event id with the stored outputs, and the version fence, as Redis does them.
* ``InMemoryVectors`` — a ``VectorSearch`` and ``VectorSink`` over an injected
  embedding function, cosine, per subject; it records every query's subject.
  Rows are searchable once added, as the Milvus index searches buffered rows.
* ``ScriptedMatcher`` — a ``SlotMatcher`` that answers from a script and
  records what it was shown.
* ``read_turn`` — what the offline rules read from one user turn, the way the
  reader's tests ask it; ``slots_spoken`` and ``slots_asked`` — the slots it gives
  a candidate for, and those it asks a human about.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from slotwise.processors.model import (
    ApplyOutcome,
    ApplyStatus,
    Neighbour,
    Resolution,
    SlotAnswer,
    VectorRow,
)
from slotwise.processors.rules.classifier import ExemplarClassifier
from slotwise.processors.rules.extractor import extract_records
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import parse_answer
from slotwise.topics.records import (
    CandidateFact,
    Fact,
    Observation,
    ReviewItem,
    SupersessionEvent,
)

__all__ = [
    "InMemoryFacts",
    "InMemoryState",
    "InMemoryVectors",
    "MatchCall",
    "ScriptedMatcher",
    "read_turn",
    "slots_asked",
    "slots_spoken",
]

# When a test's turn is said, unless it says otherwise: a Saturday morning.
SAID = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


def read_turn(
    text: str,
    schema: AttributeSchema,
    classifier: ExemplarClassifier | None = None,
    *,
    ask: bool = False,
    at: datetime = SAID,
) -> list[CandidateFact]:
    """The candidates the rules read from one turn of ``user-42`` said at ``at``: its
    statements, with ``ask`` the questions the worker's reader adds, and a deletion
    request's question (an erase request's commands are left out)."""
    observation = Observation(
        observation_id="obs-1", subject_id="user-42", text=text, observed_at=at
    )
    return [
        r
        for r in extract_records(observation, schema, classifier, ask=ask)
        if isinstance(r, CandidateFact)
    ]


def slots_spoken(text: str, schema: AttributeSchema) -> set[str | None]:
    """The slots one turn gives a candidate for: a value read, or a question asked."""
    return {c.attribute for c in read_turn(text, schema, ask=True)}


def slots_asked(text: str, schema: AttributeSchema) -> set[str | None]:
    """The slots one turn asks a human about (None: a correction no slot was read for)."""
    return {c.attribute for c in read_turn(text, schema, ask=True) if c.question is not None}


EmbedFn = Callable[[Sequence[str]], list[list[float]]]


class InMemoryFacts:
    """Fact records by id, plus everything the applied resolutions published."""

    def __init__(self, facts: Iterable[Fact] = ()) -> None:
        self.facts: dict[str, Fact] = {}
        self.supersessions: list[SupersessionEvent] = []
        self.reviews: list[ReviewItem] = []
        self._by_slot: dict[tuple[str, str | None], set[str]] = defaultdict(set)
        for fact in facts:
            self.put(fact)

    def put(self, fact: Fact) -> None:
        previous = self.facts.get(fact.fact_id)
        if previous is not None:
            self._by_slot[(previous.subject_id, previous.attribute)].discard(fact.fact_id)
        self.facts[fact.fact_id] = fact
        self._by_slot[(fact.subject_id, fact.attribute)].add(fact.fact_id)

    def apply(self, resolution: Resolution) -> None:
        for fact in resolution.facts:
            self.put(fact)
        self.supersessions.extend(resolution.supersessions)
        if resolution.review is not None:
            self.reviews.append(resolution.review)

    def current(self, subject_id: str, attribute: str | None = None) -> list[Fact]:
        """The subject's current facts (of one attribute if given), oldest first."""
        if attribute is None:
            found = [f for f in self.facts.values() if f.subject_id == subject_id]
        else:
            found = [self.facts[i] for i in self._by_slot.get((subject_id, attribute), ())]
        return sorted(
            (f for f in found if f.status == "current"),
            key=lambda f: (f.valid_from, f.recorded_at, f.fact_id),
        )

    async def current_in_slot(self, subject_id: str, attribute: str) -> list[Fact]:
        return self.current(subject_id, attribute)

    async def get_facts(self, subject_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        found = (self.facts.get(fact_id) for fact_id in fact_ids)
        return [f for f in found if f is not None and f.subject_id == subject_id]


@dataclass(frozen=True, slots=True)
class _Snapshot:
    facts: InMemoryFacts
    subject_id: str
    version: int
    stored: bytes | None

    async def current_in_slot(self, subject_id: str, attribute: str) -> list[Fact]:
        return await self.facts.current_in_slot(subject_id, attribute)

    async def get_facts(self, subject_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        return await self.facts.get_facts(subject_id, fact_ids)


class InMemoryState:
    """A ``StateStore``: what Redis keeps for the write path, in dictionaries."""

    def __init__(self, facts: InMemoryFacts | None = None) -> None:
        self.facts = facts if facts is not None else InMemoryFacts()
        self.versions: dict[str, int] = defaultdict(int)
        self.applied: dict[tuple[str, str], bytes] = {}
        self.observations: dict[str, list[str]] = defaultdict(list)
        self.stale_answers = 0  # ``apply`` calls refused by the version fence

    async def snapshot(
        self,
        subject_id: str,
        event_id: str | None = None,
        *,
        own_fact_id: str | None = None,
        attribute: str | None = None,
    ) -> _Snapshot:
        stored = self.applied.get((subject_id, event_id)) if event_id else None
        return _Snapshot(self.facts, subject_id, self.versions[subject_id], stored)

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
        foreign = [f.fact_id for f in facts if f.subject_id != subject_id]
        if foreign:
            raise ValueError(f"facts {foreign} are not about subject {subject_id!r}")
        version = self.versions[subject_id]
        stored = self.applied.get((subject_id, event_id))
        if stored is not None:
            return ApplyOutcome(ApplyStatus.ALREADY_APPLIED, version, stored)
        if version != expected_version:
            self.stale_answers += 1
            return ApplyOutcome(ApplyStatus.STALE, version)
        for fact in facts:
            self.facts.put(fact)
        self.applied[(subject_id, event_id)] = outputs
        if observation_id:
            self.observations[subject_id].append(observation_id)
        self.versions[subject_id] = version + 1
        return ApplyOutcome(ApplyStatus.APPLIED, version + 1)


class InMemoryVectors:
    """Cosine search over rows embedded with ``embed``, always within one subject."""

    def __init__(self, embed: EmbedFn) -> None:
        self._embed = embed
        self._by_subject: dict[str, dict[str, tuple[VectorRow, np.ndarray]]] = defaultdict(dict)
        self.queried_subjects: list[str] = []
        self.flushes = 0

    def add(self, rows: Iterable[VectorRow]) -> None:
        batch = list(rows)
        if not batch:
            return
        # Upsert: an UPDATE re-sends a row whose text changed.
        for row, vector in zip(batch, self._embed([r.text for r in batch]), strict=True):
            self._by_subject[row.subject_id][row.fact_id] = (row, _unit(vector))

    def apply(self, resolution: Resolution) -> None:
        self.add(resolution.vector_rows)

    async def flush(self) -> None:
        self.flushes += 1

    async def nearest(
        self,
        subject_id: str,
        text: str,
        *,
        k: int,
        floor: float,
        exclude: Collection[str] = (),
    ) -> list[tuple[str, float]]:
        self.queried_subjects.append(subject_id)
        rows = [
            entry
            for entry in self._by_subject.get(subject_id, {}).values()
            if entry[0].fact_id not in exclude
        ]
        if not rows:
            return []
        query = _unit(self._embed([text])[0])
        scores = np.stack([vector for _, vector in rows]) @ query
        hits = sorted(
            ((row, float(score)) for (row, _), score in zip(rows, scores, strict=True)),
            key=lambda hit: (-hit[1], hit[0].fact_id),
        )
        hits = [(row, score) for row, score in hits[:k] if score >= floor]
        if any(row.subject_id != subject_id for row, _ in hits):
            raise AssertionError(f"search for {subject_id} returned another subject's row")
        return [(row.fact_id, score) for row, score in hits]


@dataclass(frozen=True, slots=True)
class MatchCall:
    candidate: CandidateFact
    neighbours: tuple[Neighbour, ...]


@dataclass
class ScriptedMatcher:
    """Answers in script order, like a model would.

    A ``str`` is a raw model reply and goes through ``parse_answer`` as a real
    adapter does: a rejected reply (prose, an id, a number off the list) becomes
    ``SlotAnswer(index=None)`` and is counted in ``rejected``. A ``SlotAnswer``
    is returned as given (errors, review reasons).
    """

    script: list[str | SlotAnswer]
    calls: list[MatchCall] = field(default_factory=list)
    rejected: int = 0

    async def match(self, candidate: CandidateFact, neighbours: Sequence[Neighbour]) -> SlotAnswer:
        self.calls.append(MatchCall(candidate, tuple(neighbours)))
        if not self.script:
            raise AssertionError(f"matcher asked about {candidate.candidate_id} past its script")
        reply = self.script.pop(0)
        if isinstance(reply, SlotAnswer):
            return reply
        try:
            return SlotAnswer(index=parse_answer(reply, len(neighbours)), raw=reply)
        except ValueError:
            self.rejected += 1
            return SlotAnswer(index=None, raw=reply)


def _unit(vector: Sequence[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    return array if norm == 0.0 else array / norm
