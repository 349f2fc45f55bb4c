"""The resolution policy applied after the write: to two stored facts, or a fact moved.

The write path resolves a *candidate* against the current facts of its slot
(``processors.resolve``). The background jobs find the same situations among
facts already stored: consolidation finds two current facts that fill one
slot, a human accepts such a pair, re-slotting moves a free-text fact into a
schematized slot that may already hold one. They decide with the same
policy — :func:`~slotwise.processors.resolve.resolve`, fed the newer fact as
the candidate — and then write the outcome onto the stored facts instead of
creating new ones: the newer fact keeps its id, its ``recorded_at`` and its
history, and gains ``supersedes``; the older one is closed exactly as the
write path closes it, and the supersession event has the id the write path
would have given it.

``authority`` is a human's: the high-stakes gate (which sends a contradiction
of a corroborated value to review) is what a review decision answers, so it
is not asked again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from slotwise.processors.change import Change, supersession_id
from slotwise.processors.model import Decision
from slotwise.processors.resolve import normalise, resolve, vector_row
from slotwise.processors.schema import AttributeSpec
from slotwise.topics.records import (
    CandidateFact,
    DecidedBy,
    Fact,
    ReviewItem,
    ReviewOrigin,
    Scalar,
    SupersessionEvent,
)

__all__ = ["as_candidate", "newest", "place", "resolve_pair", "supersede", "with_authority"]


def as_candidate(fact: Fact, **update: object) -> CandidateFact:
    """A stored fact in the shape the policy takes. Its ``candidate_id`` is kept, so
    the fact the policy would make of it has the stored fact's id."""
    candidate = CandidateFact(
        candidate_id=fact.candidate_id,
        subject_id=fact.subject_id,
        attribute=fact.attribute,
        value=fact.value,
        text=fact.text,
        category=fact.category,
        observed_at=fact.observed_at,
        valid_from=fact.valid_from,
        source=fact.source,
        confidence=fact.confidence,
        importance=fact.importance,
        observation_id=fact.observation_id,
        derived_from=fact.derived_from,
    )
    return candidate.model_copy(update=update) if update else candidate


def with_authority(spec: AttributeSpec | None) -> AttributeSpec | None:
    """``spec`` without the high-stakes gate: a human has decided."""
    return None if spec is None else replace(spec, stakes="normal")


def newest(facts: Sequence[Fact]) -> Fact:
    """The fact the policy treats as the newer claim: latest ``valid_from``, then
    ``recorded_at``, then id (a total order, so a replay picks the same one)."""
    return max(facts, key=lambda f: (f.valid_from, f.recorded_at, f.fact_id))


def supersede(
    olds: Sequence[Fact],
    new: Fact,
    *,
    decided_by: DecidedBy,
    reason: str,
    now: datetime,
) -> Change:
    """``new`` (stored, current) supersedes every fact of ``olds``: closed as the write
    path closes them, linked both ways, one event each."""
    closed = {"status": "superseded", "valid_to": new.valid_from, "superseded_by": new.fact_id}
    retired = tuple(old.model_copy(update=closed) for old in olds)
    head = new.model_copy(update={"supersedes": olds[-1].fact_id}) if olds else new
    events = tuple(
        SupersessionEvent(
            event_id=supersession_id(old.fact_id, new.fact_id),
            subject_id=new.subject_id,
            attribute=new.attribute if new.attribute is not None else old.attribute,
            old_fact_id=old.fact_id,
            new_fact_id=new.fact_id,
            old_value=old.value,
            new_value=new.value,
            old_text=old.text,
            new_text=new.text,
            decided_by=decided_by,
            reason=f"{decided_by}: {reason}",
            valid_from=new.valid_from,
            observation_id=new.observation_id,
            recorded_at=now,
        )
        for old in olds
    )
    return Change(Decision.SUPERSEDE.value, reason, (head, *retired), events)


def resolve_pair(
    a: Fact,
    b: Fact,
    spec: AttributeSpec | None,
    *,
    decided_by: DecidedBy,
    now: datetime,
    review_id: str,
    origin: ReviewOrigin,
    why: str,
) -> Change:
    """Two current facts found to fill one slot, decided by the policy.

    The newer supersedes the older; the same value, or a ``many`` attribute,
    changes nothing (both stay: a restatement is not a contradiction); a
    high-stakes contradiction of a corroborated fact becomes a review item.
    """
    newer = newest([a, b])
    older = b if newer is a else a
    resolution = resolve(
        as_candidate(newer),
        spec,
        [older],
        decided_by=decided_by,
        now=now,
        embedding_model=newer.embedding_model,
    )
    if resolution.decision is Decision.SUPERSEDE:
        return supersede([older], newer, decided_by=decided_by, reason=why, now=now)
    if resolution.decision is Decision.REVIEW:
        item = ReviewItem(
            review_id=review_id,
            subject_id=newer.subject_id,
            kind="high_stakes",
            reason=f"{why}; {resolution.reason}",
            candidate=as_candidate(newer),
            incumbent_fact_ids=(older.fact_id,),
            created_at=now,
            origin=origin,
        )
        return Change(Decision.REVIEW.value, resolution.reason, reviews=(item,))
    return Change(Decision.NOOP.value, f"{why}; both kept: {resolution.reason}")


def place(
    fact: Fact,
    spec: AttributeSpec,
    value: Scalar,
    slot: Sequence[Fact],
    *,
    now: datetime,
    review_id: str,
    authority: bool = False,
) -> Change:
    """Move the free-text ``fact`` into ``spec``'s slot with ``value``, by the policy
    against the slot's current facts ``slot``.

    Moved in place (same id; the slot index follows the attribute): alone in
    its slot, or beside others of a ``many`` attribute, it just moves; newer
    than the incumbent it supersedes it; older, it is stored as closed
    history; restating the incumbent's value it re-confirms the incumbent and
    is closed as a restatement; a high-stakes contradiction goes to review and
    nothing moves.
    """
    moved = fact.model_copy(
        update={"attribute": spec.name, "value": value, "category": spec.category}
    )
    row = (vector_row(moved),)
    current = [f for f in slot if f.status == "current" and f.fact_id != fact.fact_id]
    why = f"reslot: {moved.text!r} fills {spec.name} = {value!r}"
    if not current or not spec.single_valued:
        return Change(Decision.UPDATE.value, why, (moved,), vector_rows=row)
    resolution = resolve(
        as_candidate(moved),
        with_authority(spec) if authority else spec,
        current,
        decided_by="consolidation",
        now=now,
        embedding_model=fact.embedding_model,
    )
    decision = resolution.decision
    if decision is Decision.SUPERSEDE:
        change = supersede(current, moved, decided_by="consolidation", reason=why, now=now)
        return replace(change, vector_rows=row)
    if decision is Decision.REVIEW:
        item = ReviewItem(
            review_id=review_id,
            subject_id=fact.subject_id,
            kind="high_stakes",
            reason=f"{why}; {resolution.reason}",
            candidate=as_candidate(moved),
            incumbent_fact_ids=(fact.fact_id, *(f.fact_id for f in current)),
            created_at=now,
            origin="reslot",
        )
        return Change(decision.value, resolution.reason, reviews=(item,))
    if decision is Decision.ADD:  # older than the incumbent: closed history
        stored = resolution.facts[0]
        closed = moved.model_copy(update={"status": "history", "valid_to": stored.valid_to})
        return Change(decision.value, f"{why}; {resolution.reason}", (closed,), vector_rows=row)
    # NOOP / UPDATE: the incumbent already holds the value; it is re-confirmed.
    same = [f for f in current if f.value is not None and normalise(f.value) == normalise(value)]
    incumbent = same[-1] if same else current[-1]
    ends = max(moved.valid_from, incumbent.valid_from)
    closed = moved.model_copy(update={"status": "history", "valid_to": ends})
    refreshed = tuple(f for f in resolution.facts if f.fact_id != moved.fact_id)
    return Change(
        decision.value,
        f"{why}; restates {incumbent.fact_id}",
        (*refreshed, closed),
        vector_rows=row,
    )
