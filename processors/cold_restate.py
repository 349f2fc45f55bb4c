"""The cascade, cold tier included: a candidate restating an archived fact restores it.

An archived fact is out of the slot index and out of the hot vectors, so the
plain cascade would ADD a candidate restating it: a duplicate of something the
store still holds. :class:`ColdAwareCascade` looks at the cold tier when, and
only when, the plain cascade would store a new fact — ADD, or the ADD-and-review
of a close current neighbour (the other decisions cost nothing more):

* **exact path** — the slot's archived facts are resolved together with its
  current ones, by the same policy (``processors/resolve.py``): the same value
  re-confirms the archived fact (NOOP, or UPDATE with more detail); a different
  value of a single-valued slot supersedes it (the archived fact was still
  true until now, so its chain gets ``valid_to`` and a supersession event, as
  for a current fact); a high-stakes contradiction goes to review.
* **vector path** — the subject's nearest archived facts (cold-tier search,
  only if the subject has any); one the candidate restates (cosine ≥ 0.9 and
  the same content words, as for current neighbours) is re-confirmed. A
  contradiction of an archived free-text fact is not looked for: it would cost
  a model question per ADD for what forgetting already judged unused.

A re-confirmed archived fact is written still ``archived`` (with its new
``last_verified``), and the resolution carries a ``restore`` command for it,
published on the candidates topic with the candidate's outputs: the restore
is applied in log order after the candidate, by the same handler as
``slotwise restore``, which moves the vector back to the hot tier. So "NOOP +
restore": nothing is stored twice, and there is one way a fact comes back.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from slotwise.processors.cascade import RESTATEMENT_COSINE, Cascade, restates
from slotwise.processors.exact_join import exact_join
from slotwise.processors.model import Decision, Neighbour, Resolution, stable_id
from slotwise.processors.ports import FactReader
from slotwise.processors.resolve import reconfirm, resolve
from slotwise.topics.records import CandidateFact, Command, Fact

__all__ = ["ColdAwareCascade", "ColdFacts", "restore_command"]

_SCORE_DIGITS = 4


class ColdFacts(Protocol):
    """What the cascade reads of the cold tier (Redis's archived index, Milvus's cold
    collection: ``sinks/redis/cold.py``, ``sinks/milvus/index.py``)."""

    async def archived_in_slot(self, subject_id: str, attribute: str | None) -> list[Fact]: ...

    async def archived_count(self, subject_id: str) -> int: ...

    async def nearest_archived(
        self, subject_id: str, text: str, *, k: int, floor: float
    ) -> list[tuple[str, float]]: ...


def restore_command(fact: Fact, *, cause: str, at: datetime, reason: str) -> Command:
    """The ``restore`` command bringing ``fact`` back, with an id derived from its cause."""
    return Command(
        schema="command/1",
        command_id=stable_id("restore", cause, fact.fact_id),
        subject_id=fact.subject_id,
        command="restore",
        issued_at=at,
        as_of=at,
        fact_id=fact.fact_id,
        reason=reason,
    )


class ColdAwareCascade(Cascade):
    """A :class:`Cascade` that also looks at the cold tier before it adds (module docstring)."""

    def __init__(self, *args: Any, cold: ColdFacts, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cold = cold

    async def resolve(
        self, candidate: CandidateFact, *, reader: FactReader | None = None
    ) -> Resolution:
        resolution = await super().resolve(candidate, reader=reader)
        adds = resolution.decision is Decision.ADD or (
            resolution.decision is Decision.REVIEW and resolution.vector_rows
        )
        if not adds or not resolution.facts:
            return resolution
        reader = reader or self._reader
        now = resolution.facts[0].recorded_at
        spec = self._schema.get(candidate.attribute)
        if spec is not None:
            return await self._exact(candidate, resolution, reader, now)
        return await self._vector(candidate, resolution, reader, now)

    async def _exact(
        self, candidate: CandidateFact, added: Resolution, reader: FactReader, now: datetime
    ) -> Resolution:
        archived = await self._cold.archived_in_slot(candidate.subject_id, candidate.attribute)
        if not archived:
            return added
        current = await exact_join(reader, candidate)
        # Resolved as if current: the policy ignores anything else, and an archived fact is
        # still true, only unused.
        thawed = [f.model_copy(update={"status": "current"}) for f in archived]
        again = resolve(
            candidate,
            self._schema.get(candidate.attribute),
            [*current, *thawed],
            decided_by="exact",
            now=now,
            embedding_model=self._embedding_model,
        )
        if again.decision is Decision.ADD and again.facts[0].status == added.facts[0].status:
            return added
        return _refrozen(again, {f.fact_id for f in archived}, candidate, now)

    async def _vector(
        self, candidate: CandidateFact, added: Resolution, reader: FactReader, now: datetime
    ) -> Resolution:
        subject = candidate.subject_id
        if not await self._cold.archived_count(subject):
            return added
        hits = await self._cold.nearest_archived(
            subject, candidate.text, k=self._top_k, floor=RESTATEMENT_COSINE
        )
        if not hits:
            return added
        scores = {fact_id: round(score, _SCORE_DIGITS) for fact_id, score in hits}
        facts = await reader.get_facts(subject, list(scores))
        neighbours = sorted(
            (
                Neighbour(f, scores[f.fact_id])
                for f in facts
                if f.status == "archived" and f.subject_id == subject
            ),
            key=lambda n: (-n.similarity, n.fact.fact_id),
        )
        restated = next((n for n in neighbours if restates(candidate.text, n)), None)
        if restated is None:
            return added
        confirmed = reconfirm(
            candidate,
            restated.fact,
            decided_by="policy",
            now=now,
            embedding_model=self._embedding_model,
        )
        confirmed = replace(confirmed, reason=f"vector: {confirmed.reason}", decided_by="vector")
        return _refrozen(confirmed, {restated.fact.fact_id}, candidate, now)


def _refrozen(
    resolution: Resolution, archived: set[str], candidate: CandidateFact, now: datetime
) -> Resolution:
    """The resolution with every archived fact it keeps true written back archived, its
    hot vector rows dropped, and a restore command per such fact."""
    facts: list[Fact] = []
    restored: list[Fact] = []
    for fact in resolution.facts:
        if fact.fact_id in archived and fact.status in ("current", "archived"):
            kept = fact.model_copy(update={"status": "archived"})
            restored.append(kept)
            facts.append(kept)
        else:
            facts.append(fact)
    if not restored:
        return replace(resolution, reason=f"cold: {resolution.reason}")
    why = f"restated by candidate {candidate.candidate_id}"
    restored_ids = {f.fact_id for f in restored}
    return replace(
        resolution,
        reason=(
            f"cold: {resolution.reason}; restored from the cold tier by the restore "
            "command that follows"
        ),
        facts=tuple(facts),
        vector_rows=tuple(r for r in resolution.vector_rows if r.fact_id not in restored_ids),
        commands=tuple(
            restore_command(f, cause=candidate.candidate_id, at=now, reason=why) for f in restored
        ),
    )
