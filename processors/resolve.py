"""The resolution policy: what one candidate does to the facts of its slot.

A pure function of the candidate, the slot's attribute spec and the current
incumbents. It never mutates or deletes: every changed incumbent comes back as
a new ``Fact`` copy, and the caller writes ``Resolution.facts`` atomically.
Every id is derived from the inputs (``stable_id``), so a replay of the same
candidate against the same state computes the same resolution.

Order of the checks, first match wins:

1. the candidate's own fact is already current → NOOP, nothing written (a replay);
2. an incumbent holds the same value → NOOP (re-confirmation) or UPDATE (more detail);
3. no incumbent, or a ``many`` attribute → ADD;
4. an incumbent is newer than the candidate → ADD as closed history (out-of-order),
   unless it is an ongoing state said after every incumbent ("at Monzo for 3 years");
5. high stakes: an incumbent better corroborated than the candidate (re-confirmed, from
   a more trusted source, or held at a higher confidence) → REVIEW, nothing stored; so
   is a contradiction between equals that states no change. The subject stating the
   change ("my email changed, it's … now"), or a better-corroborated candidate, goes on;
6. otherwise → SUPERSEDE every current incumbent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from slotwise.processors.aliases import same_database
from slotwise.processors.model import Decision, Resolution, VectorRow, stable_id
from slotwise.processors.schema import AttributeSpec
from slotwise.processors.zones import same_zone
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import CandidateFact, DecidedBy, Fact, ReviewItem, SupersessionEvent

__all__ = [
    "SubjectMismatch",
    "adds_detail",
    "fact_id_for",
    "new_fact",
    "normalise",
    "reconfirm",
    "resolve",
    "same_value",
    "vector_row",
]

_WORD = re.compile(r"\w+")


class SubjectMismatch(SlotwiseError, ValueError):
    """An incumbent handed to the policy belongs to another subject (a reader bug)."""


def fact_id_for(candidate: CandidateFact) -> str:
    """The id of the fact a candidate becomes: a replay finds the same row."""
    return stable_id("fact", candidate.candidate_id)


def normalise(value: object) -> str:
    """The comparison form: casefolded, whitespace collapsed, no trailing full stop."""
    return " ".join(str(value).split()).casefold().rstrip(" .!")


def same_value(candidate: CandidateFact, fact: Fact) -> bool:
    """Whether the candidate states the incumbent's value (texts when either has no value)."""
    if candidate.value is not None and fact.value is not None:
        if normalise(candidate.value) == normalise(fact.value):
            return True
        if candidate.attribute == "database":
            return same_database(candidate.value, fact.value)
        return candidate.attribute == "timezone" and same_zone(candidate.value, fact.value)
    return normalise(candidate.text) == normalise(fact.text)


def adds_detail(candidate_text: str, incumbent_text: str) -> bool:
    """The candidate says everything the incumbent says, and more.

    Word sets, not lengths: a longer paraphrase ("is employed by" for "works
    at") is not more detail and must not flip the stored text back and forth.
    """
    new = set(_WORD.findall(candidate_text.casefold()))
    old = set(_WORD.findall(incumbent_text.casefold()))
    return old < new


def new_fact(
    candidate: CandidateFact,
    spec: AttributeSpec | None,
    *,
    now: datetime,
    embedding_model: str | None,
    attribute: str | None = None,
) -> Fact:
    """The current fact a candidate becomes when it is stored."""
    category = candidate.category or (spec.category if spec is not None else None)
    return Fact(
        schema="fact/1",
        fact_id=fact_id_for(candidate),
        subject_id=candidate.subject_id,
        attribute=candidate.attribute if candidate.attribute is not None else attribute,
        value=candidate.value,
        text=candidate.text,
        category=category,
        status="current",
        valid_from=candidate.effective_valid_from,
        observed_at=candidate.observed_at,
        recorded_at=now,
        source=candidate.source,
        confidence=candidate.confidence,
        importance=candidate.importance,
        candidate_id=candidate.candidate_id,
        observation_id=candidate.observation_id,
        embedding_model=embedding_model,
        derived_from=candidate.derived_from,
    )


def vector_row(fact: Fact) -> VectorRow:
    return VectorRow(
        fact_id=fact.fact_id, subject_id=fact.subject_id, text=fact.text, category=fact.category
    )


@dataclass(frozen=True, slots=True)
class _Policy:
    candidate: CandidateFact
    spec: AttributeSpec | None
    decided_by: DecidedBy
    now: datetime
    embedding_model: str | None

    def reason(self, text: str) -> str:
        return f"{self.decided_by}: {text}"

    def slot(self) -> str:
        return self.candidate.attribute or (self.spec.name if self.spec else "matched slot")

    def fact(self, attribute: str | None, **update: object) -> Fact:
        fact = new_fact(
            self.candidate,
            self.spec,
            now=self.now,
            embedding_model=self.embedding_model,
            attribute=attribute,
        )
        return fact.model_copy(update=update) if update else fact


def resolve(
    candidate: CandidateFact,
    spec: AttributeSpec | None,
    incumbents: Sequence[Fact],
    *,
    decided_by: DecidedBy,
    now: datetime,
    embedding_model: str | None,
) -> Resolution:
    """Decide what ``candidate`` writes given the current ``incumbents`` of its slot.

    ``spec`` None means a slot the schema does not know (the model matched it):
    it is treated as single-valued with normal stakes. Non-current incumbents
    are ignored; an incumbent of another subject raises ``SubjectMismatch``.
    """
    current = _current(candidate, incumbents)
    policy = _Policy(candidate, spec, decided_by, now, embedding_model)
    if any(f.fact_id == fact_id_for(candidate) for f in current):
        return _resolution(policy, Decision.NOOP, "candidate already applied; nothing to write")
    same = [f for f in current if same_value(candidate, f)]
    if same:
        return _confirm(policy, same[-1])
    if not current:
        return _add(policy, f"no current fact fills {policy.slot()}", attribute=None)
    slot_attribute = current[-1].attribute
    if spec is not None and not spec.single_valued:
        return _add(policy, f"{spec.name} holds many values; added", attribute=slot_attribute)
    valid_from = candidate.effective_valid_from
    newer = [f for f in current if valid_from < f.valid_from]
    if newer and not _holds_now(candidate, current):
        return _history(policy, min(newer, key=lambda f: f.valid_from), slot_attribute)
    if spec is not None and spec.high_stakes:
        corroborated = [f for f in current if _corroborated(f, candidate)]
        if corroborated:
            return _review(policy, current, corroborated)
        if not candidate.stated_change and not any(_outranks(candidate, f) for f in current):
            return _review(policy, current, current, unstated=True)
    return _supersede(policy, current, slot_attribute)


def reconfirm(
    candidate: CandidateFact,
    incumbent: Fact,
    *,
    decided_by: DecidedBy,
    now: datetime,
    embedding_model: str | None,
) -> Resolution:
    """NOOP: the candidate says what the current ``incumbent`` already says (a restatement
    in other words); the incumbent is re-confirmed and nothing new is stored."""
    policy = _Policy(candidate, None, decided_by, now, embedding_model)
    verified = max(candidate.observed_at, incumbent.last_verified or candidate.observed_at)
    refreshed = incumbent.model_copy(
        update={"last_verified": verified, "verification_count": incumbent.verification_count + 1}
    )
    return _resolution(
        policy,
        Decision.NOOP,
        f"restates {_shown(incumbent)} ({incumbent.fact_id}); re-confirmed",
        facts=(refreshed,),
    )


def _current(candidate: CandidateFact, incumbents: Sequence[Fact]) -> list[Fact]:
    for fact in incumbents:
        if fact.subject_id != candidate.subject_id:
            raise SubjectMismatch(
                f"incumbent {fact.fact_id} is about {fact.subject_id!r}, "
                f"candidate {candidate.candidate_id} about {candidate.subject_id!r}"
            )
    # Oldest first, so the last one is the newest: a total order keeps replays identical.
    return sorted(
        (f for f in incumbents if f.status == "current"),
        key=lambda f: (f.valid_from, f.recorded_at, f.fact_id),
    )


# How far a source is trusted; a source not named here counts as chat. A system of
# record (the profile form, the billing system) outranks what was said in a chat.
SOURCE_TRUST = {"profile": 1, "billing": 1}


def _trust(source: str) -> int:
    return SOURCE_TRUST.get(source, 0)


def _corroborated(incumbent: Fact, candidate: CandidateFact) -> bool:
    """The incumbent is better corroborated than the candidate: re-confirmed
    since it was stored, from a more trusted source, or held at a higher confidence.
    A fact stored once from a chat is not, so the subject can still change it."""
    return (
        incumbent.verification_count >= 1
        or _trust(incumbent.source) > _trust(candidate.source)
        or incumbent.confidence > candidate.confidence
    )


def _outranks(candidate: CandidateFact, incumbent: Fact) -> bool:
    """The candidate is the better-corroborated one: a more trusted source or surer."""
    return (
        _trust(candidate.source) > _trust(incumbent.source)
        or candidate.confidence > incumbent.confidence
    )


def _resolution(
    policy: _Policy,
    decision: Decision,
    text: str,
    *,
    facts: tuple[Fact, ...] = (),
    supersessions: tuple[SupersessionEvent, ...] = (),
    review: ReviewItem | None = None,
    vector_rows: tuple[VectorRow, ...] = (),
) -> Resolution:
    return Resolution(
        decision=decision,
        candidate=policy.candidate,
        reason=policy.reason(text),
        decided_by=policy.decided_by,
        facts=facts,
        supersessions=supersessions,
        review=review,
        vector_rows=vector_rows,
    )


def _confirm(policy: _Policy, incumbent: Fact) -> Resolution:
    candidate = policy.candidate
    verified = candidate.observed_at
    if incumbent.last_verified is not None and incumbent.last_verified > verified:
        verified = incumbent.last_verified
    update: dict[str, object] = {
        "last_verified": verified,
        "verification_count": incumbent.verification_count + 1,
    }
    if not adds_detail(candidate.text, incumbent.text):
        refreshed = incumbent.model_copy(update=update)
        return _resolution(
            policy,
            Decision.NOOP,
            f"{policy.slot()} already holds {_shown(incumbent)}; re-confirmed",
            facts=(refreshed,),
        )
    update.update(
        text=candidate.text,
        confidence=max(incumbent.confidence, candidate.confidence),
        importance=max(incumbent.importance, candidate.importance),
    )
    merged = incumbent.model_copy(update=update)
    return _resolution(
        policy,
        Decision.UPDATE,
        f"{policy.slot()} keeps {_shown(incumbent)} with more detail from the candidate",
        facts=(merged,),
        # The text changed, so the vector index must re-embed the row.
        vector_rows=(vector_row(merged),),
    )


def _add(policy: _Policy, text: str, *, attribute: str | None) -> Resolution:
    fact = policy.fact(attribute)
    return _resolution(policy, Decision.ADD, text, facts=(fact,), vector_rows=(vector_row(fact),))


def _history(policy: _Policy, successor: Fact, attribute: str | None) -> Resolution:
    fact = policy.fact(attribute, status="history", valid_to=successor.valid_from)
    return _resolution(
        policy,
        Decision.ADD,
        f"out-of-order: {_shown(fact)} is older than current {_shown(successor)}; "
        f"stored as history closed at {successor.valid_from.isoformat()}",
        facts=(fact,),
        vector_rows=(vector_row(fact),),
    )


def _review(
    policy: _Policy, current: list[Fact], corroborated: list[Fact], *, unstated: bool = False
) -> Resolution:
    candidate = policy.candidate
    best = corroborated[-1]
    why = (
        "states no change or correction"
        if unstated
        else f"verified {best.verification_count}x from {best.source} at confidence "
        f"{best.confidence:.2f} (candidate {candidate.confidence:.2f} from {candidate.source})"
    )
    text = (
        f"high-stakes {policy.slot()}: {_shown(candidate)} contradicts {_shown(best)}, "
        f"{why}; a human decides"
    )
    item = ReviewItem(
        schema="review/1",
        review_id=stable_id("review", candidate.candidate_id),
        subject_id=candidate.subject_id,
        kind="high_stakes",
        reason=policy.reason(text),
        candidate=candidate,
        incumbent_fact_ids=tuple(f.fact_id for f in current),
        created_at=policy.now,
    )
    return _resolution(policy, Decision.REVIEW, text, review=item)


def _holds_now(candidate: CandidateFact, current: list[Fact]) -> bool:
    """An ongoing state said after every incumbent was observed is the present, not
    history, however early it began; anything else keeps the out-of-order rule."""
    return candidate.ongoing and all(f.observed_at < candidate.observed_at for f in current)


def _supersede(policy: _Policy, current: list[Fact], attribute: str | None) -> Resolution:
    fact = policy.fact(attribute, supersedes=current[-1].fact_id)
    closed = {"status": "superseded", "superseded_by": fact.fact_id}
    # An ongoing state may have begun before an incumbent did: never close one before it began.
    ends = [{**closed, "valid_to": max(fact.valid_from, old.valid_from)} for old in current]
    retired = tuple(old.model_copy(update=end) for old, end in zip(current, ends, strict=True))
    return _resolution(
        policy,
        Decision.SUPERSEDE,
        f"{policy.slot()}: {_shown(fact)} supersedes {', '.join(f.fact_id for f in current)}",
        facts=(fact, *retired),
        supersessions=tuple(_event(policy, old, fact) for old in current),
        vector_rows=(vector_row(fact),),
    )


def _event(policy: _Policy, old: Fact, new: Fact) -> SupersessionEvent:
    return SupersessionEvent(
        schema="supersession/1",
        # From both ids only: a replay recomputes it, so subscribers can deduplicate.
        event_id=stable_id("supersession", old.fact_id, new.fact_id),
        subject_id=new.subject_id,
        attribute=new.attribute,
        old_fact_id=old.fact_id,
        new_fact_id=new.fact_id,
        old_value=old.value,
        new_value=new.value,
        old_text=old.text,
        new_text=new.text,
        decided_by=policy.decided_by,
        reason=policy.reason(
            f"{policy.slot()} changed from {_shown(old)} to {_shown(new)} "
            f"as of {new.valid_from.isoformat()}"
        ),
        valid_from=new.valid_from,
        observation_id=new.observation_id,
        recorded_at=policy.now,
    )


def _shown(record: Fact | CandidateFact) -> str:
    return repr(record.value) if record.value is not None else repr(record.text)
