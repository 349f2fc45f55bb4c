"""Soft forgetting: a fact's score, and which facts a pass archives.

After “Memory Conflict, Forgetting, and Embedding Drift”.

The score of a fact evaluated at ``as_of``::

    importance · 0.5^(Δt / half_life) · (1 + δ · [verified within the window])

* ``Δt`` runs from the fact's last access (a read that returned it), or from
  when it was recorded if nothing ever read it, to ``as_of``; never negative
  (a read after ``as_of`` counts as a read at ``as_of``).
* ``half_life`` is the attribute's, from the vocabulary; null (identity) is
  infinite, so those facts never decay. A fact without a vocabulary attribute
  takes its category's half-life (the vocabulary's, or a settings override),
  else a default.
* the verification boost counts once however often the fact was re-confirmed:
  it saturates (as “Memory Conflict, Forgetting, and Embedding Drift” asks), so a
  fact a user repeats daily does not become unforgettable by repetition alone.

A pass archives, among the subject's current facts recorded by ``as_of``,
those scoring below the threshold and, past a per-subject budget, the lowest
scoring of the rest (ties broken by fact id, so a pass is a pure function of
its inputs). Facts recorded after ``as_of`` did not exist when the pass was
evaluated: they are neither scored nor counted against the budget, so writes
racing a pass cannot change what it archives.

Everything here is pure: the worker's handler (``streams/commands/forget.py``)
reads the state, calls :func:`select_archived`, and stores the decision.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from slotwise.processors.schema import AttributeSchema
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Fact

__all__ = [
    "Access",
    "ForgetPolicy",
    "HalfLives",
    "PolicyError",
    "Scored",
    "Selection",
    "decay",
    "score",
    "scores_of",
    "select_archived",
    "summary",
]

_DAY_S = 86_400.0
ArchiveReason = Literal["below_threshold", "over_budget"]


class PolicyError(SlotwiseError, ValueError):
    """A forgetting policy's parameters are out of range."""


@dataclass(frozen=True, slots=True)
class Access:
    """What the read side recorded about one fact: how often and when it was last read."""

    count: int
    last: datetime | None


@dataclass(frozen=True, slots=True)
class ForgetPolicy:
    """The knobs of one pass. A ``forget`` command carries them in ``params``, so every
    worker (and a replay) decides with the values the pass was issued with."""

    threshold: float = 0.1
    budget: int | None = None
    delta: float = 0.5
    verified_window: timedelta = timedelta(days=30)
    # Retired facts (superseded, out-of-order history) serve neither default reads nor
    # the vector fetch: their vectors go to the cold tier too, status and links unchanged.
    closed_to_cold: bool = True

    def __post_init__(self) -> None:
        if not math.isfinite(self.threshold) or self.threshold < 0:
            raise PolicyError(f"threshold {self.threshold!r}: a finite number >= 0")
        if self.budget is not None and self.budget < 0:
            raise PolicyError(f"budget {self.budget!r}: at least 0, or none")
        if not math.isfinite(self.delta) or self.delta < 0:
            raise PolicyError(f"delta {self.delta!r}: a finite number >= 0")
        if self.verified_window < timedelta(0):
            raise PolicyError("verified_window must not be negative")

    def params(self) -> dict[str, Any]:
        """The policy as a command's ``params`` (shallow JSON)."""
        return {
            "threshold": self.threshold,
            "budget": self.budget,
            "delta": self.delta,
            "verified_window_days": self.verified_window.total_seconds() / _DAY_S,
            "closed_to_cold": self.closed_to_cold,
        }

    @classmethod
    def from_params(cls, params: Mapping[str, Any], default: ForgetPolicy) -> ForgetPolicy:
        """The policy a command's ``params`` name; what they leave out comes from ``default``."""
        try:
            window = params.get("verified_window_days")
            budget = params.get("budget", default.budget)
            return cls(
                threshold=float(params.get("threshold", default.threshold)),
                budget=None if budget is None else int(budget),
                delta=float(params.get("delta", default.delta)),
                verified_window=(
                    default.verified_window if window is None else timedelta(days=float(window))
                ),
                closed_to_cold=bool(params.get("closed_to_cold", default.closed_to_cold)),
            )
        except (TypeError, ValueError) as exc:
            raise PolicyError(f"forget params {dict(params)!r}: {exc}") from None


@dataclass(frozen=True, slots=True)
class HalfLives:
    """Half-life in days per attribute and per category; None means never decays."""

    by_attribute: Mapping[str, float | None]
    by_category: Mapping[str, float | None]
    default: float = 365.0

    @classmethod
    def of(
        cls,
        schema: AttributeSchema,
        *,
        overrides: Mapping[str, float | None] | None = None,
        default: float = 365.0,
    ) -> HalfLives:
        """From the vocabulary. A category's half-life is its attributes' (the longest when
        they differ, so a free-text fact is never forgotten faster than its kind's slots);
        ``overrides`` sets categories the vocabulary has no attribute for (free text)."""
        by_category: dict[str, float | None] = {}
        for spec in schema:
            if spec.category not in by_category:
                by_category[spec.category] = spec.half_life_days
            else:
                by_category[spec.category] = _longest(
                    by_category[spec.category], spec.half_life_days
                )
        by_category.update(overrides or {})
        return cls(
            by_attribute={spec.name: spec.half_life_days for spec in schema},
            by_category=by_category,
            default=default,
        )

    def days(self, fact: Fact) -> float | None:
        if fact.attribute is not None and fact.attribute in self.by_attribute:
            return self.by_attribute[fact.attribute]
        if fact.category is not None and fact.category in self.by_category:
            return self.by_category[fact.category]
        return self.default


def _longest(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else max(a, b)


def decay(elapsed: timedelta, half_life_days: float | None) -> float:
    """0.5^(Δt / half_life): 1 at Δt = 0, ½ after one half-life; 1 forever without one."""
    if half_life_days is None:
        return 1.0
    if half_life_days <= 0:
        return 0.0
    days = max(0.0, elapsed.total_seconds() / _DAY_S)
    return float(0.5 ** (days / half_life_days))


def score(
    fact: Fact,
    *,
    as_of: datetime,
    last_access: datetime | None,
    half_life_days: float | None,
    delta: float,
    verified_window: timedelta,
) -> float:
    """The forgetting score of ``fact`` at ``as_of`` (see the module docstring)."""
    since = last_access if last_access is not None else fact.recorded_at
    verified = fact.last_verified is not None and fact.last_verified >= as_of - verified_window
    boost = 1.0 + delta if verified else 1.0
    return fact.importance * decay(as_of - since, half_life_days) * boost


@dataclass(frozen=True, slots=True)
class Scored:
    fact: Fact
    score: float
    reason: ArchiveReason | None = None


@dataclass(frozen=True, slots=True)
class Selection:
    """A pass's verdict on one subject: what it archives, what stays hot, what it skipped."""

    archived: tuple[Scored, ...]
    kept: tuple[Scored, ...]
    skipped: int = 0
    below_threshold: int = field(init=False)
    over_budget: int = field(init=False)

    def __post_init__(self) -> None:
        below = sum(1 for s in self.archived if s.reason == "below_threshold")
        object.__setattr__(self, "below_threshold", below)
        object.__setattr__(self, "over_budget", len(self.archived) - below)


def select_archived(
    facts: Iterable[Fact],
    accesses: Mapping[str, Access],
    *,
    as_of: datetime,
    policy: ForgetPolicy,
    half_lives: HalfLives,
) -> Selection:
    """Which of one subject's facts a pass at ``as_of`` archives (see the module docstring).

    Only current facts recorded by ``as_of`` are scored; ``skipped`` counts the
    current facts recorded after it.
    """
    current = [f for f in facts if f.status == "current"]
    eligible = [f for f in current if f.recorded_at <= as_of]
    scored = sorted(
        (_scored(f, accesses.get(f.fact_id), as_of, policy, half_lives) for f in eligible),
        key=lambda s: (-s.score, s.fact.fact_id),
    )
    kept = [s for s in scored if s.score >= policy.threshold]
    archived = [_as(s, "below_threshold") for s in scored if s.score < policy.threshold]
    if policy.budget is not None and len(kept) > policy.budget:
        archived = [_as(s, "over_budget") for s in kept[policy.budget :]] + archived
        kept = kept[: policy.budget]
    return Selection(tuple(archived), tuple(kept), skipped=len(current) - len(eligible))


def _scored(
    fact: Fact,
    access: Access | None,
    as_of: datetime,
    policy: ForgetPolicy,
    half_lives: HalfLives,
) -> Scored:
    value = score(
        fact,
        as_of=as_of,
        last_access=access.last if access is not None else None,
        half_life_days=half_lives.days(fact),
        delta=policy.delta,
        verified_window=policy.verified_window,
    )
    return Scored(fact, value)


def _as(scored: Scored, reason: ArchiveReason) -> Scored:
    return Scored(scored.fact, scored.score, reason)


def summary(selection: Selection, *, as_of: datetime, policy: ForgetPolicy) -> str:
    """One line for the stored decision: what the pass archived and why."""
    budget = "none" if policy.budget is None else str(policy.budget)
    return (
        f"forget: archived {len(selection.archived)} of "
        f"{len(selection.archived) + len(selection.kept)} scored "
        f"({selection.below_threshold} below {policy.threshold:g}, "
        f"{selection.over_budget} over budget {budget}; {selection.skipped} recorded later) "
        f"as of {as_of.isoformat()}"
    )


def scores_of(selection: Selection) -> Sequence[tuple[str, float]]:
    """``(fact_id, score)`` of every fact the pass scored, highest first."""
    every = [*selection.kept, *selection.archived]
    return sorted(((s.fact.fact_id, s.score) for s in every), key=lambda p: (-p[1], p[0]))
