"""What an erase command removes from a subject's facts, and what becomes of the rest.

A pure function of the command and the subject's facts (every status), so a
replay of the command against the same state plans the same erasure.

**Scope.** The whole subject; or every fact of ``attribute``, whatever its
status; or the one fact ``fact_id`` (with ``attribute`` too, only if it has
that attribute: a scope is the intersection of what the command names, never
more). Then the closure over derivation: a fact that records an erased fact
in ``derived_from`` is erased with it, transitively, since what was inferred
from a forgotten statement must not outlive it. Nothing else widens a scope,
and only the subject's own facts are ever read.

**Chains.** A kept fact whose ``supersedes`` or ``superseded_by`` points at an
erased fact is re-pointed past it, to the nearest kept fact in the same
direction, or to None. Erasing B in A → B → C leaves A → C (A superseded by C,
C superseding A). Erasing the current C leaves B closed with no successor:
its ``valid_to`` and status stay, because forgetting a statement does not make
the one it replaced true again; the slot simply has no current fact.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from slotwise.topics.records import Command, Fact

__all__ = ["ErasePlan", "Scope", "plan_erasure", "scope_of", "shown"]

Scope = Literal["subject", "attribute", "fact"]


def scope_of(command: Command) -> Scope:
    """The narrowest thing the command names."""
    if command.fact_id is not None:
        return "fact"
    if command.attribute is not None:
        return "attribute"
    return "subject"


def shown(fact: Fact) -> str:
    """How decisions quote a fact in their reasons (``processors.resolve``): its value's
    repr, or its text's. A reason quoting an erased fact is redacted with it."""
    return repr(fact.value) if fact.value is not None else repr(fact.text)


@dataclass(frozen=True, slots=True)
class ErasePlan:
    """The facts to delete (``erased``, derived ones included) and the kept facts whose
    links change (``relinked``, their new full state)."""

    subject_id: str
    scope: Scope
    attribute: str | None
    erased: tuple[Fact, ...]
    erased_ids: tuple[str, ...]
    erased_set: frozenset[str]
    derived: tuple[str, ...]
    relinked: tuple[Fact, ...]
    kept_ids: frozenset[str]
    kept_texts: frozenset[str]
    # What a decision's reason names an erased fact by: its id, or its value or text as
    # the reasons quote them (see :func:`shown`). Computed once: redaction reads it per event.
    quoted: frozenset[str]
    # Per erased id, the kept fact a link to it now points at instead (None: nothing).
    successor: Mapping[str, str | None]
    predecessor: Mapping[str, str | None]

    def relink(self, fact: Fact) -> Fact | None:
        """A kept fact (in any earlier state) with its links re-pointed past erased facts;
        None if it points at none."""
        update: dict[str, object] = {}
        if fact.supersedes is not None and fact.supersedes in self.predecessor:
            update["supersedes"] = self.predecessor[fact.supersedes]
        if fact.superseded_by is not None and fact.superseded_by in self.successor:
            update["superseded_by"] = self.successor[fact.superseded_by]
        return fact.model_copy(update=update) if update else None

    @property
    def whole_subject(self) -> bool:
        return self.scope == "subject"

    @property
    def texts(self) -> tuple[str, ...]:
        """The distinct texts of the erased facts that no kept fact also holds: what must
        be found nowhere afterwards."""
        return tuple(sorted({f.text for f in self.erased} - self.kept_texts))


def plan_erasure(command: Command, facts: Sequence[Fact]) -> ErasePlan:
    """The erasure ``command`` makes of ``facts`` (the subject's, every status)."""
    subject = command.subject_id
    own = {f.fact_id: f for f in facts if f.subject_id == subject}
    scope = scope_of(command)
    named = {fid for fid, f in own.items() if _in_scope(f, command, scope)}
    erased = _closure(named, own.values())
    kept = sorted((f for fid, f in own.items() if fid not in erased), key=lambda f: f.fact_id)
    gone = tuple(sorted((own[fid] for fid in erased), key=lambda f: f.fact_id))
    plan = ErasePlan(
        subject_id=subject,
        scope=scope,
        attribute=command.attribute,
        erased=gone,
        erased_ids=tuple(f.fact_id for f in gone),
        erased_set=frozenset(erased),
        derived=tuple(sorted(erased - named)),
        relinked=(),
        kept_ids=frozenset(f.fact_id for f in kept),
        kept_texts=frozenset(f.text for f in kept),
        quoted=frozenset({shown(own[fid]) for fid in erased} | erased),
        successor=_past(own, erased, "superseded_by"),
        predecessor=_past(own, erased, "supersedes"),
    )
    relinked = tuple(copy for f in kept if (copy := plan.relink(f)) is not None)
    return replace(plan, relinked=relinked)


def _in_scope(fact: Fact, command: Command, scope: Scope) -> bool:
    if scope == "subject":
        return True
    if command.attribute is not None and fact.attribute != command.attribute:
        return False
    return scope == "attribute" or fact.fact_id == command.fact_id


def _closure(named: set[str], facts: Iterable[Fact]) -> set[str]:
    """``named`` and every fact derived from one of them, transitively."""
    erased = set(named)
    pending = [f for f in facts if f.fact_id not in erased and f.derived_from]
    grew = True
    while grew:
        grew = False
        for fact in pending:
            if fact.fact_id not in erased and erased.intersection(fact.derived_from):
                erased.add(fact.fact_id)
                grew = True
    return erased


def _past(
    facts: dict[str, Fact], erased: set[str], link: Literal["supersedes", "superseded_by"]
) -> dict[str, str | None]:
    """For each erased fact, the first kept fact along ``link`` from it, or None.

    Each chain is walked once (the answers are shared along it), so a subject of
    thousands of superseded facts costs linear time; a cycle (a corrupt chain) ends
    in None.
    """
    found: dict[str, str | None] = {}
    for start in erased:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = start
        while current is not None and current in erased and current not in found:
            if current in on_path:
                current = None
                break
            path.append(current)
            on_path.add(current)
            current = getattr(facts[current], link)
        if current is not None and current in found:
            target = found[current]
        elif current is None or current in erased:
            target = None
        else:
            # Kept, or a fact the subject does not hold: a link to it stays as it was.
            target = current
        for fid in path:
            found[fid] = target
    return found
