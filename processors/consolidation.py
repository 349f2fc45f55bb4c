"""Consolidation, the pure part: which pairs to ask about, and what the answers change.

The write path shows the slot matcher a new free-text fact's top-K nearest
current facts, and nothing else; a contradiction outside them stays in the
store ("the false-negative cascade" of
“Memory Conflict, Forgetting, and Embedding Drift”). A consolidation pass asks
about the pairs the write path never compared:

* **Which pairs.** Within one subject and one category, two current facts of
  which at least one is free text (two schematized facts are keyed exactly:
  the same attribute cannot hold two current values of a ``one`` slot, and
  different attributes are different slots by definition). The pair is left
  out when the write path compared it — the earlier fact was among the top-K
  neighbours (at the vector floor) of the later one, over the facts current
  when the later one was recorded, reconstructed from the stored facts and
  their embeddings — or an earlier pass did, or a human rejected it.
* **How they are asked.** As the write path asks: the later fact is the
  candidate, the earlier facts it was never compared with are its numbered
  neighbours, at most K per call, closest first; questions are ordered by
  their closest neighbour, so a budget spends itself on the likeliest
  contradictions first.
* **What an answer changes** is decided where the change is applied, at the
  command's place in the subject's log (:func:`apply_findings`): each finding
  carries the fingerprints of the facts it was decided against, and one whose
  facts changed meanwhile is dropped, never applied (odysseus #1940: a job
  that wrote back what it read before a model call erased the writes that
  arrived meanwhile). A pair found to fill one slot is resolved by the
  write path's policy (:func:`~slotwise.processors.pairs.resolve_pair`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import numpy as np

from slotwise.processors.change import Change, fingerprint
from slotwise.processors.model import Neighbour, stable_id
from slotwise.processors.pairs import as_candidate, newest, resolve_pair, supersede
from slotwise.processors.resolve import new_fact, vector_row
from slotwise.processors.review_policy import pair_key
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Fact, ReviewItem

__all__ = [
    "Finding",
    "Plan",
    "Question",
    "apply_findings",
    "compared_at_write",
    "plan",
    "revalidation_review_id",
    "review_id_for",
]

FindingKind = Literal["match", "review", "keep", "rewrite", "revalidate"]


@dataclass(frozen=True, slots=True)
class Question:
    """One slot-match call: ``fact`` as the candidate, ``neighbours`` numbered 1..n."""

    fact: Fact
    neighbours: tuple[Neighbour, ...]

    @property
    def closest(self) -> float:
        return self.neighbours[0].similarity


@dataclass(frozen=True, slots=True)
class Plan:
    """The questions for one subject, in the order to ask them, and what was skipped."""

    questions: tuple[Question, ...]
    pairs: int
    seen_at_write: int
    known: int


def _current_at(facts: Sequence[Fact], moment: datetime) -> list[Fact]:
    """The facts current when ``moment`` was recorded (believed-at reconstruction)."""
    recorded = {f.fact_id: f.recorded_at for f in facts}
    alive: list[Fact] = []
    for fact in facts:
        if fact.recorded_at >= moment or fact.status == "history":
            continue
        successor = recorded.get(fact.superseded_by or "")
        if fact.status == "superseded" and (successor is None or successor <= moment):
            continue
        alive.append(fact)
    return alive


def compared_at_write(
    fact: Fact, facts: Sequence[Fact], similarity: Mapping[str, float], *, top_k: int, floor: float
) -> frozenset[str]:
    """The ids the write path showed the slot matcher beside ``fact`` (free text only)."""
    if fact.attribute is not None:
        return frozenset()
    scored = [
        (round(similarity[f.fact_id], 4), f.fact_id)
        for f in _current_at(facts, fact.recorded_at)
        if f.fact_id != fact.fact_id and f.fact_id in similarity
    ]
    ranked = sorted((s for s in scored if s[0] >= floor), key=lambda s: (-s[0], s[1]))
    return frozenset(fact_id for _, fact_id in ranked[:top_k])


def _matrix(facts: Sequence[Fact], vectors: Mapping[str, Sequence[float]]) -> np.ndarray:
    rows = np.asarray([vectors[f.fact_id] for f in facts], dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = rows / np.where(norms == 0, 1.0, norms)
    return np.asarray(unit @ unit.T)


def plan(
    facts: Sequence[Fact],
    vectors: Mapping[str, Sequence[float]],
    *,
    top_k: int,
    floor: float,
    known: Collection[str] = (),
) -> Plan:
    """The questions that cover every uncompared pair of one subject's current facts.

    ``facts`` is every fact of the subject (the write-time reconstruction needs
    the superseded ones too); ``vectors`` their embeddings by id (a fact
    without one is left out); ``known`` the pair keys compared by earlier
    passes or rejected by a human.
    """
    embedded = [f for f in facts if f.fact_id in vectors]
    if len(embedded) < 2:
        return Plan((), 0, 0, 0)
    cosines = _matrix(embedded, vectors)
    position = {f.fact_id: i for i, f in enumerate(embedded)}
    order = sorted(
        (f for f in embedded if f.status == "current"), key=lambda f: (f.recorded_at, f.fact_id)
    )
    questions: list[Question] = []
    pairs = at_write = skipped = 0
    for later_index, later in enumerate(order):
        row = cosines[position[later.fact_id]]
        similarity = {f.fact_id: float(row[position[f.fact_id]]) for f in embedded}
        written = compared_at_write(later, embedded, similarity, top_k=top_k, floor=floor)
        open_pairs: list[Neighbour] = []
        for earlier in order[:later_index]:
            if earlier.category != later.category:
                continue
            if earlier.attribute is not None and later.attribute is not None:
                continue
            score = round(similarity[earlier.fact_id], 4)
            if score < floor:
                continue
            if earlier.fact_id in written:
                at_write += 1
            elif pair_key(earlier.fact_id, later.fact_id) in known:
                skipped += 1
            else:
                pairs += 1
                open_pairs.append(Neighbour(fact=earlier, similarity=score))
        open_pairs.sort(key=lambda n: (-n.similarity, n.fact.fact_id))
        for start in range(0, len(open_pairs), top_k):
            questions.append(Question(later, tuple(open_pairs[start : start + top_k])))
    questions.sort(key=lambda q: (-q.closest, q.fact.fact_id))
    return Plan(tuple(questions), pairs, at_write, skipped)


def revalidation_review_id(derived: Fact) -> str:
    """One review item per flagged fact while it stays as it is, whichever pass asks."""
    return stable_id("review", "revalidation", derived.fact_id, fingerprint(derived))


def review_id_for(a: str, b: str) -> str:
    """A consolidation finding's review id: one per pair, whichever pass found it."""
    return stable_id("review", "consolidation", *sorted((a, b)))


@dataclass(frozen=True, slots=True)
class Finding:
    """What the pass found, as it travels in a ``consolidate`` command's ``params``.

    ``match``: the model says ``new`` and ``old`` fill one slot; ``review``: a close
    pair a human should look at (offline); ``keep`` / ``rewrite`` / ``revalidate``:
    the verdict on the flagged derived fact ``new`` (``text``/``value`` for a
    rewrite, ``sources`` the current facts it now rests on). ``prints``: the
    fingerprint of every fact named, as the pass read it.
    """

    kind: FindingKind
    new: str
    old: str | None = None
    prints: tuple[str, ...] = ()
    why: str = ""
    text: str | None = None
    sources: tuple[str, ...] = ()

    def ids(self) -> tuple[str, ...]:
        return (self.new,) if self.old is None else (self.new, self.old)

    def dump(self) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": self.kind, "new": self.new, "prints": list(self.prints)}
        if self.old is not None:
            body["old"] = self.old
        body.update(why=self.why, text=self.text, sources=list(self.sources))
        return body

    @classmethod
    def load(cls, body: Mapping[str, Any]) -> Finding:
        return cls(
            kind=body["kind"],
            new=str(body["new"]),
            old=None if body.get("old") is None else str(body["old"]),
            prints=tuple(body.get("prints", ())),
            why=str(body.get("why", "")),
            text=body.get("text"),
            sources=tuple(body.get("sources", ())),
        )


def apply_findings(
    findings: Sequence[Finding],
    facts: Mapping[str, Fact],
    schema: AttributeSchema,
    *,
    now: datetime,
    command_id: str,
    rejected: Collection[str] = (),
    embedding_model: str | None = None,
) -> tuple[Change, int]:
    """The change ``findings`` make to ``facts`` (by id, as stored now), and how many
    were dropped because a fact they name changed since the pass read it."""
    working = dict(facts)
    change = Change("NOOP", "")
    dropped = 0
    for finding in findings:
        named = [working.get(fact_id) for fact_id in finding.ids()]
        present = [f for f in named if f is not None]
        if len(present) != len(named) or tuple(fingerprint(f) for f in present) != finding.prints:
            dropped += 1
            continue
        if finding.old is not None and pair_key(finding.new, finding.old) in rejected:
            continue
        step = _finding(
            finding, present, schema=schema, now=now, command_id=command_id,
            embedding_model=embedding_model,
        )  # fmt: skip
        change = change.plus(step)
        working.update({f.fact_id: f for f in step.facts})
    return change, dropped


def _finding(
    finding: Finding,
    facts: list[Fact],
    *,
    schema: AttributeSchema,
    now: datetime,
    command_id: str,
    embedding_model: str | None,
) -> Change:
    if finding.kind in ("match", "review"):
        new, old = facts
        spec = schema.get(new.attribute or old.attribute)
        review_id = review_id_for(new.fact_id, old.fact_id)
        if finding.kind == "match":
            return resolve_pair(
                new, old, spec, decided_by="consolidation", now=now, review_id=review_id,
                origin="consolidation", why=f"consolidation: {finding.why}",
            )  # fmt: skip
        newer = newest([new, old])
        item = ReviewItem(
            review_id=review_id,
            subject_id=new.subject_id,
            kind="close_neighbour",
            reason=f"consolidation: {finding.why}",
            candidate=as_candidate(newer),
            incumbent_fact_ids=((old if newer is new else new).fact_id,),
            created_at=now,
            origin="consolidation",
        )
        return Change("REVIEW", item.reason, reviews=(item,))
    (derived,) = facts
    if finding.kind == "keep":
        kept = derived.model_copy(update={"needs_revalidation": False})
        return Change("UPDATE", f"revalidation: the claim still holds ({finding.why})", (kept,))
    if finding.kind == "rewrite" and finding.text:
        candidate = CandidateFact(
            candidate_id=stable_id("rederive", derived.fact_id, command_id),
            subject_id=derived.subject_id,
            attribute=derived.attribute,
            value=derived.value,
            text=finding.text,
            category=derived.category,
            observed_at=now,
            valid_from=now if now > derived.valid_from else derived.valid_from,
            source="consolidation",
            confidence=derived.confidence,
            importance=derived.importance,
            derived_from=finding.sources or derived.derived_from,
        )
        fact = new_fact(candidate, schema.get(derived.attribute), now=now,
                        embedding_model=embedding_model or derived.embedding_model)  # fmt: skip
        why = f"revalidation: re-derived from {', '.join(candidate.derived_from)} ({finding.why})"
        change = supersede([derived], fact, decided_by="consolidation", reason=why, now=now)
        return Change(change.decision, why, change.facts, change.supersessions,
                      vector_rows=(vector_row(fact),))  # fmt: skip
    item = ReviewItem(
        review_id=revalidation_review_id(derived),
        subject_id=derived.subject_id,
        kind="ambiguous",
        reason=f"revalidation: a source of {derived.text!r} was superseded; {finding.why}",
        candidate=as_candidate(derived),
        incumbent_fact_ids=(derived.fact_id,),
        created_at=now,
        origin="revalidation",
    )
    return Change("REVIEW", item.reason, reviews=(item,))
