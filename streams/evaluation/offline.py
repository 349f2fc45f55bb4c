"""The real stages in-process, over the in-memory ports: what each pair and turn did.

Each pair gets a subject of its own holding only its incumbent (as the store
would hold it: the exact-join index and a MiniLM vector). The turn goes through
the configured extractor, then each candidate through the real
:class:`~processors.cascade.Cascade` and resolution policy, in order, exactly as
the worker would apply them. Beside the cascade's decision, each pair records
what every mechanism of the article's table would have said about the same pair,
so they are compared on one labelled set:

* the exact path: a candidate carries the incumbent's attribute;
* the vector floor: the best MiniLM cosine between the incumbent's text and a
  candidate's text (the turn's text when nothing was extracted);
* the model re-ranker: asked over the top five of the incumbent and the four
  other pairs' incumbents nearest the candidate, when a model is configured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from slotwise.processors.cascade import Cascade
from slotwise.processors.model import Decision, Neighbour, Resolution
from slotwise.processors.ports import Embedder, Extractor, SlotMatcher
from slotwise.processors.resolve import vector_row
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import InMemoryFacts, InMemoryVectors
from slotwise.streams.evaluation.data import (
    LabelledTurn,
    Pair,
    incumbent_fact,
    subject_of,
    turn_observation,
)
from slotwise.topics.records import CandidateFact, Command, DecidedBy, Fact

__all__ = [
    "RERANK_TOP_K",
    "Extracted",
    "PairOutcome",
    "Stages",
    "TurnOutcome",
    "run_pairs",
    "run_turns",
]

RERANK_TOP_K = 5


@dataclass(frozen=True, slots=True)
class Extracted:
    """One candidate as scored: its slot, value and text."""

    attribute: str | None
    value: str | None
    text: str


@dataclass(frozen=True, slots=True)
class PairOutcome:
    """What the pipeline and each mechanism did with one pair."""

    pair_id: str
    decision: str  # ADD … REVIEW, "none" (no candidate), "erase"
    value: str | None
    attribute: str | None
    decided_by: str | None
    reason: str
    candidates: tuple[Extracted, ...]
    erase: tuple[str | None, ...]  # the attribute of each erase command (None: everything)
    exact_match: bool
    cosine: float
    rerank_match: bool | None  # None: no model configured
    supersedes_incumbent: bool
    supersessions: int  # supersession events written, of the incumbent or not


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    turn_id: str
    facts: tuple[Extracted, ...]
    erase: tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class Stages:
    """What the evaluation runs: the shipped stages as configured."""

    schema: AttributeSchema
    extractor: Extractor
    matcher: SlotMatcher
    matcher_label: DecidedBy
    embedder: Embedder
    reranker: SlotMatcher | None = None  # a model matcher, when one is configured
    description: str = "offline"


def _shown(value: object) -> str | None:
    return None if value is None else str(value)


def _extracted(candidates: Sequence[CandidateFact]) -> tuple[Extracted, ...]:
    """The facts a turn stated; a reader's question (``CandidateFact.question``) states none."""
    return tuple(
        Extracted(c.attribute, _shown(c.value), c.text) for c in candidates if c.question is None
    )


def _split(
    extracted: Sequence[CandidateFact | Command],
) -> tuple[list[CandidateFact], list[Command]]:
    candidates = [c for c in extracted if isinstance(c, CandidateFact)]
    commands = [c for c in extracted if isinstance(c, Command) and c.command == "erase"]
    return candidates, commands


async def run_turns(
    stages: Stages, turns: Sequence[LabelledTurn], progress: Callable[[], None] | None = None
) -> list[TurnOutcome]:
    outcomes: list[TurnOutcome] = []
    for turn in turns:
        subject = subject_of(turn.id)
        observation = turn_observation(turn.id, turn.text, turn.observed_at, subject_id=subject)
        candidates, commands = _split(await stages.extractor.extract(observation))
        facts = _extracted(candidates)
        outcomes.append(TurnOutcome(turn.id, facts, tuple(c.attribute for c in commands)))
        if progress is not None:
            progress()
    return outcomes


class _Cosines:
    """MiniLM cosines with every text embedded once."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._vectors: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, self._embedder.embed(missing), strict=True):
                self._vectors[text] = np.asarray(vector, dtype=np.float64)
        return [self._vectors[t].tolist() for t in texts]

    def cosine(self, a: str, b: str) -> float:
        self.embed([a, b])
        return float(self._vectors[a] @ self._vectors[b])


async def run_pairs(
    stages: Stages, pairs: Sequence[Pair], progress: Callable[[], None] | None = None
) -> list[PairOutcome]:
    cosines = _Cosines(stages.embedder)
    # One batch up front: the embedder is far faster per text in batches.
    cosines.embed([p.incumbent.text for p in pairs] + [p.turn.text for p in pairs])
    outcomes: list[PairOutcome] = []
    for pair in pairs:
        outcomes.append(await _run_pair(stages, pair, pairs, cosines))
        if progress is not None:
            progress()
    return outcomes


async def _run_pair(
    stages: Stages, pair: Pair, everyone: Sequence[Pair], cosines: _Cosines
) -> PairOutcome:
    subject = subject_of(pair.id)
    model = stages.embedder.model_name
    incumbent = incumbent_fact(pair, stages.schema, subject_id=subject, embedding_model=model)
    facts = InMemoryFacts([incumbent])
    vectors = InMemoryVectors(cosines.embed)
    vectors.add([vector_row(incumbent)])
    observed: datetime = pair.turn.observed_at
    cascade = Cascade(
        stages.schema,
        facts,
        vectors,
        stages.matcher,
        now=lambda: observed,
        embedding_model=model,
        matcher_label=stages.matcher_label,
    )
    observation = turn_observation(pair.id, pair.turn.text, observed, subject_id=subject)
    candidates, commands = _split(await stages.extractor.extract(observation))
    resolutions: list[Resolution] = []
    for candidate in candidates:
        resolution = await cascade.resolve(candidate)
        facts.apply(resolution)
        vectors.apply(resolution)
        resolutions.append(resolution)
    texts = [c.text for c in candidates] or [pair.turn.text]
    cosine = max(cosines.cosine(incumbent.text, t) for t in texts)
    exact = incumbent.attribute is not None and any(
        c.attribute == incumbent.attribute and c.question is None for c in candidates
    )
    rerank = None
    if stages.reranker is not None:
        rerank = await _rerank(
            stages.reranker, incumbent, candidates, pair, everyone=everyone, cosines=cosines
        )
    chosen = _bearing(incumbent, resolutions, pair)
    erase = tuple(c.attribute for c in commands)
    extracted = _extracted(candidates)
    events = [e for r in resolutions for e in r.supersessions]
    supersedes = any(e.old_fact_id == incumbent.fact_id for e in events)
    if chosen is None:
        decision = "erase" if erase else "none"
        reason = (
            f"erase command(s) for {', '.join(a or 'the whole subject' for a in erase)}"
            if erase
            else "no candidate extracted"
        )
        return PairOutcome(
            pair.id,
            decision,
            None,
            None,
            None,
            reason,
            extracted,
            erase,
            exact,
            cosine,
            rerank,
            supersedes,
            len(events),
        )
    candidate = chosen.candidate
    return PairOutcome(
        pair.id,
        chosen.decision.value,
        _shown(candidate.value),
        candidate.attribute,
        chosen.decided_by,
        chosen.reason,
        extracted,
        erase,
        exact,
        cosine,
        rerank,
        supersedes,
        len(events),
    )


def _bearing(incumbent: Fact, resolutions: Sequence[Resolution], pair: Pair) -> Resolution | None:
    """The resolution that bears on the pair's slot: the one that touched the incumbent,
    else the candidate of the incumbent's (or the expected) attribute, else the first.

    A reader's question about a slot that holds nothing asks no one and writes nothing
    (a NOOP): it bears on no pair, as a worker's outputs show nothing of it."""
    resolutions = [
        r for r in resolutions if not (r.candidate.question and r.decision is Decision.NOOP)
    ]
    if not resolutions:
        return None
    for resolution in resolutions:
        touched = {f.fact_id for f in resolution.facts}
        if resolution.review is not None:
            touched |= set(resolution.review.incumbent_fact_ids)
        if incumbent.fact_id in touched:
            return resolution
    wanted = [incumbent.attribute]
    if pair.expected is not None:
        wanted.append(pair.expected.attribute)
    for attribute in wanted:
        for resolution in resolutions:
            if attribute is not None and resolution.candidate.attribute == attribute:
                return resolution
    return resolutions[0]


async def _rerank(
    reranker: SlotMatcher,
    incumbent: Fact,
    candidates: Sequence[CandidateFact],
    pair: Pair,
    *,
    everyone: Sequence[Pair],
    cosines: _Cosines,
) -> bool:
    """Whether the model, shown the top five of a store holding the incumbent and the
    other pairs' incumbents, picks the incumbent for one of the turn's candidates."""
    others = [p for p in everyone if p.id != pair.id and p.incumbent.text != incumbent.text]
    for candidate in candidates:
        pool = [incumbent] + [
            incumbent.model_copy(
                update={
                    "fact_id": f"other-{p.id}",
                    "text": p.incumbent.text,
                    "attribute": p.incumbent.attribute,
                    "value": p.incumbent.value,
                }
            )
            for p in others
        ]
        scored = sorted(
            (Neighbour(f, round(cosines.cosine(candidate.text, f.text), 4)) for f in pool),
            key=lambda n: (-n.similarity, n.fact.fact_id),
        )[:RERANK_TOP_K]
        answer = await reranker.match(candidate, scored)
        if answer.index is not None and scored[answer.index].fact.fact_id == incumbent.fact_id:
            return True
    return False
