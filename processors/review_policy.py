"""What a human's review decision does: accept, reject or edit one open item.

A pure function of the item, the decision and the facts as they stand at the
decision's place in the subject's log. Which facts matter depends on the
item's *mode*:

* ``held`` — a write the policy would not make alone (a high-stakes
  contradiction): nothing was stored. Accept applies the held candidate with
  a human's authority (the supersession event it would have produced);
  edit applies it with the given value; reject stores nothing.
* ``pair`` — two stored facts that may fill one slot (a close neighbour, a
  consolidation finding). Accept resolves the pair by the policy (the newer
  supersedes the older); edit stores the given value as a new fact that
  supersedes both; reject keeps both.
* ``redecide`` — the model could not be asked: accept (or edit) decides the
  candidate again, through the cascade, as a new write would be.
* ``reslot`` — a free-text fact that may fill a new attribute: accept moves it
  with the proposed value, edit with the given one, reject leaves it.
* ``revalidate`` — a derived fact whose source was superseded: accept keeps
  it (the flag is cleared), edit replaces its claim, reject closes it.
* ``ask`` — the reader could not decide (a deletion whose scope it could not
  read, a slot whose new value it could not read): edit applies the human's
  value to the slot as a held write would; accept and reject write nothing.

An item whose incumbent changed meanwhile is not applied as decided: a held
candidate is decided again by the normal policy against the new state (which
may open a new item, linked by ``replaced_by``); any other stale item is
closed as ``superseded`` and writes nothing. A rejection is remembered
(:func:`rejection_keys`) so the same pair is not asked about again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from slotwise.processors.change import Change
from slotwise.processors.model import Decision, Resolution, stable_id
from slotwise.processors.pairs import (
    as_candidate,
    newest,
    place,
    resolve_pair,
    supersede,
    with_authority,
)
from slotwise.processors.resolve import fact_id_for, new_fact, normalise, resolve, vector_row
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Command, Fact, ReviewItem, ReviewStatus, Scalar

__all__ = [
    "Mode",
    "Redecide",
    "ReviewState",
    "after_redecision",
    "decide",
    "edited",
    "held_keys",
    "mode",
    "pair_key",
    "rejection_keys",
    "reslot_key",
    "resolved",
]

Mode = Literal["held", "pair", "redecide", "reslot", "revalidate", "ask"]


def mode(item: ReviewItem) -> Mode:
    if item.candidate.question is not None:
        return "ask"
    if item.origin == "reslot":
        return "reslot"
    if item.origin == "revalidation":
        return "revalidate"
    if item.origin == "consolidation" or item.kind == "close_neighbour":
        return "pair"
    if item.kind == "model_failure" or item.candidate.attribute is None:
        return "redecide"
    return "held"


@dataclass(frozen=True, slots=True)
class ReviewState:
    """What the handler read for one item: the candidate's own stored fact (if any), the
    item's incumbents as stored now (by id), and the current facts of the candidate's
    attribute (of the proposed attribute, for a re-slotting)."""

    own: Fact | None = None
    named: dict[str, Fact] = field(default_factory=dict)
    slot: tuple[Fact, ...] = ()


@dataclass(frozen=True, slots=True)
class Redecide:
    """The decision needs the cascade: ``candidate`` is decided as a new write, and the
    item then takes ``status`` (see :func:`after_redecision`)."""

    candidate: CandidateFact
    status: ReviewStatus
    why: str


def _pair_key(a: str, b: str) -> str:
    return "pair\0" + "\0".join(sorted((a, b)))


def held_keys(candidate: CandidateFact, incumbent_ids: tuple[str, ...]) -> tuple[str, ...]:
    """What a rejected held candidate leaves behind: this value is not wanted over these
    incumbents, so the same claim against the same fact does not come back."""
    said = normalise(candidate.value if candidate.value is not None else candidate.text)
    attribute = candidate.attribute or "-"
    return tuple(f"value\0{attribute}\0{fact_id}\0{said}" for fact_id in incumbent_ids)


def rejection_keys(item: ReviewItem) -> tuple[str, ...]:
    """The rejection memory a rejected item leaves (none for items nothing can re-raise)."""
    ids = item.incumbent_fact_ids
    kind = mode(item)
    if kind == "held":
        return held_keys(item.candidate, ids)
    if kind == "pair" and ids:
        return (_pair_key(fact_id_for(item.candidate), ids[0]),)
    if kind == "reslot" and ids and item.candidate.attribute:
        return (f"reslot\0{ids[0]}\0{item.candidate.attribute}",)
    return ()


def pair_key(a: str, b: str) -> str:
    """The rejection key of two stored facts a human said are not one slot."""
    return _pair_key(a, b)


def reslot_key(fact_id: str, attribute: str) -> str:
    return f"reslot\0{fact_id}\0{attribute}"


def edited(candidate: CandidateFact, value: Scalar, review_id: str) -> CandidateFact:
    """The held candidate with a human's value: a new candidate (its own id), from the
    ``review`` source at full confidence, stating the change."""
    if candidate.attribute is None and candidate.value is None:
        text, new_value = str(value), None
    else:
        old = "" if candidate.value is None else str(candidate.value)
        text = (
            candidate.text.replace(old, str(value))
            if old and old in candidate.text
            else (f"User's {candidate.attribute or 'fact'} is {value}.")
        )
        new_value = value
    return candidate.model_copy(
        update={
            "candidate_id": stable_id("review-edit", review_id),
            "value": new_value,
            "text": text,
            "source": "review",
            "confidence": 1.0,
            "stated_change": True,
            "question": None,
        }
    )


def resolved(
    item: ReviewItem,
    status: ReviewStatus,
    command: Command,
    now: datetime,
    why: str,
    *,
    fact_ids: tuple[str, ...] = (),
    replaced_by: str | None = None,
) -> ReviewItem:
    """The item's resolution record (``review/1``, same ``review_id``)."""
    return item.model_copy(
        update={
            "status": status,
            "resolution": why,
            "resolved_at": now,
            "command_id": command.command_id,
            "fact_ids": fact_ids,
            "replaced_by": replaced_by,
        }
    )


def _status(command: Command) -> ReviewStatus:
    return "edited" if command.action == "edit" else "accepted"


@dataclass(frozen=True, slots=True)
class _Ctx:
    item: ReviewItem
    command: Command
    state: ReviewState
    schema: AttributeSchema
    now: datetime
    embedding_model: str | None

    @property
    def who(self) -> str:
        return f"review {self.item.review_id}: {self.command.action}ed by a human"

    @property
    def value(self) -> Scalar:
        if self.command.value is None:
            raise ValueError("an edit carries a value")
        return self.command.value

    def candidate(self, candidate: CandidateFact) -> CandidateFact:
        """``candidate``, or with the human's value for an edit."""
        if self.command.action != "edit":
            return candidate
        return edited(candidate, self.value, self.item.review_id)

    def closed(self, status: ReviewStatus, why: str) -> Change:
        record = resolved(self.item, status, self.command, self.now, f"{self.who}; {why}")
        return Change(status.upper(), why, reviews=(record,))

    def done(self, change: Change) -> Change:
        record = resolved(
            self.item,
            _status(self.command),
            self.command,
            self.now,
            f"{self.who}: {change.reason}",
            fact_ids=tuple(f.fact_id for f in change.facts),
        )
        return change.with_reviews(record)

    def replacing(
        self, olds: list[Fact], candidate: CandidateFact, attribute: str | None
    ) -> Change:
        """A new fact from ``candidate`` supersedes ``olds`` (an edit's value)."""
        spec = self.schema.get(attribute)
        fact = new_fact(candidate, spec, now=self.now, embedding_model=self.embedding_model)
        change = supersede(olds, fact, decided_by="policy", reason=self.who, now=self.now)
        return replace(change, vector_rows=(vector_row(fact),))


def decide(
    item: ReviewItem,
    command: Command,
    state: ReviewState,
    schema: AttributeSchema,
    *,
    now: datetime,
    embedding_model: str | None,
) -> Change | Redecide:
    """What ``command`` (a ``review`` decision) does to the open ``item``."""
    ctx = _Ctx(item, command, state, schema, now, embedding_model)
    if command.action == "reject" and mode(item) == "revalidate":
        return _retire(ctx)
    if command.action == "reject":
        return ctx.closed("rejected", "nothing written")
    if command.action == "edit" and command.value is None:
        return Change(Decision.NOOP.value, f"{ctx.who} without a value; the item stays open")
    handlers = {
        "held": _held,
        "pair": _pair,
        "redecide": _redecide,
        "reslot": _reslot,
        "revalidate": _revalidate,
        "ask": _ask,
    }
    return handlers[mode(item)](ctx)


def _held(ctx: _Ctx) -> Change | Redecide:
    item = ctx.item
    candidate = ctx.candidate(item.candidate)
    if {f.fact_id for f in ctx.state.slot} != set(item.incumbent_fact_ids):
        return Redecide(candidate, "superseded", f"{ctx.who}; the incumbent changed, re-evaluated")
    resolution = resolve(
        candidate,
        with_authority(ctx.schema.get(candidate.attribute)),
        ctx.state.slot,
        decided_by="policy",
        now=ctx.now,
        embedding_model=ctx.embedding_model,
    )
    return ctx.done(Change.of(resolution))


def _ask(ctx: _Ctx) -> Change | Redecide:
    """The reader asked (a deletion it could not scope, a value it could not read): an
    edit of a slot's question applies the human's value like a held write; anything else
    closes the item and writes nothing (an erasure is a command of its own)."""
    if ctx.command.action == "edit" and ctx.item.candidate.attribute is not None:
        return _held(ctx)
    return ctx.closed("accepted", "seen by a human; nothing written")


def _redecide(ctx: _Ctx) -> Change | Redecide:
    return Redecide(
        ctx.candidate(ctx.item.candidate), _status(ctx.command), f"{ctx.who}; decided again"
    )


def _pair(ctx: _Ctx) -> Change | Redecide:
    ids = ctx.item.incumbent_fact_ids
    own = ctx.state.own
    other = ctx.state.named.get(ids[0]) if ids else None
    if own is None or other is None or own.status != "current" or other.status != "current":
        return ctx.closed("superseded", "the pair changed meanwhile; nothing written")
    attribute = own.attribute or other.attribute
    if ctx.command.action == "accept":
        change = resolve_pair(
            own,
            other,
            with_authority(ctx.schema.get(attribute)),
            decided_by="policy",
            now=ctx.now,
            review_id=ctx.item.review_id,
            origin=ctx.item.origin,
            why=ctx.who,
        )
        return ctx.done(change)
    newer = newest([own, other])
    older = other if newer is own else own
    return ctx.done(ctx.replacing([older, newer], ctx.candidate(as_candidate(newer)), attribute))


def _reslot(ctx: _Ctx) -> Change | Redecide:
    ids = ctx.item.incumbent_fact_ids
    fact = ctx.state.named.get(ids[0]) if ids else None
    spec = ctx.schema.get(ctx.item.candidate.attribute)
    if fact is None or fact.status != "current" or fact.attribute is not None or spec is None:
        return ctx.closed("superseded", "the fact changed meanwhile; nothing written")
    value = ctx.value if ctx.command.action == "edit" else ctx.item.candidate.value
    if value is None:
        return Change(Decision.NOOP.value, f"{ctx.who} without a value; edit it instead")
    change = place(
        fact,
        spec,
        value,
        ctx.state.slot,
        now=ctx.now,
        review_id=stable_id("review", ctx.item.review_id, ctx.command.command_id),
        authority=True,
    )
    return ctx.done(change)


def _retire(ctx: _Ctx) -> Change:
    """A human says the derived claim no longer holds: it is closed (history), not erased."""
    ids = ctx.item.incumbent_fact_ids
    derived = ctx.state.named.get(ids[0]) if ids else None
    if derived is None or derived.status != "current":
        return ctx.closed("rejected", "the fact changed meanwhile; nothing written")
    ends = max(ctx.now, derived.valid_from)
    closed = derived.model_copy(
        update={"status": "history", "valid_to": ends, "needs_revalidation": False}
    )
    record = resolved(
        ctx.item, "rejected", ctx.command, ctx.now, f"{ctx.who}; the claim was closed",
        fact_ids=(derived.fact_id,),
    )  # fmt: skip
    return Change("REJECTED", "the derived claim no longer holds", (closed,), reviews=(record,))


def _revalidate(ctx: _Ctx) -> Change | Redecide:
    ids = ctx.item.incumbent_fact_ids
    derived = ctx.state.named.get(ids[0]) if ids else None
    if derived is None or derived.status != "current":
        return ctx.closed("superseded", "the fact changed meanwhile; nothing written")
    if ctx.command.action == "accept":
        kept = derived.model_copy(update={"needs_revalidation": False})
        return ctx.done(Change(Decision.UPDATE.value, "the claim still holds", (kept,)))
    candidate = ctx.candidate(as_candidate(derived))
    return ctx.done(ctx.replacing([derived], candidate, derived.attribute))


def after_redecision(
    item: ReviewItem, command: Command, redecide: Redecide, resolution: Resolution, now: datetime
) -> Change:
    """The change a re-decided candidate makes, with the item's resolution record: a new
    review item (its own id, linked by ``replaced_by``) if the policy asks a human again."""
    if resolution.review is not None:
        fresh = resolution.review.model_copy(
            update={"review_id": stable_id("review", item.review_id, command.command_id)}
        )
        why = f"{redecide.why}: {resolution.reason}"
        old = resolved(item, "superseded", command, now, why, replaced_by=fresh.review_id)
        change = Change.of(resolution)
        return Change(change.decision, why, change.facts, change.supersessions,
                      (fresh, old), change.vector_rows)  # fmt: skip
    change = Change.of(resolution)
    record = resolved(
        item, redecide.status, command, now, f"{redecide.why}: {resolution.reason}",
        fact_ids=tuple(f.fact_id for f in change.facts),
    )  # fmt: skip
    return change.with_reviews(record)
