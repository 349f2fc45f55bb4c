"""Half-lives fitted from the store: how long a fact of each category stays true.

A fact of a single-valued attribute lives from ``valid_from`` until a newer
value supersedes it (``valid_to``). Modelled as exponential with rate λ per
category, the superseded facts are observed lifetimes and the still-true ones
(current or archived: archiving ends a fact's use, not its truth) are
right-censored: they have lived *at least* their age so far. The maximum
likelihood estimate is

    λ̂ = d / T,   half-life = ln 2 / λ̂

with ``d`` the closed lifetimes and ``T`` the total exposure, closed lifetimes
*and* censored ages. A plain mean of the closed lifetimes is biased short: it
only counts the facts that already ended, which are the short-lived ones. The
confidence interval is the exact (Garwood) one for a Poisson count ``d`` over
exposure ``T``: ``λ ∈ [χ²(a/2; 2d) / 2T, χ²(1-a/2; 2d+2) / 2T]`` at confidence ``1 - a``.

Only attributes of the vocabulary that can be superseded (``one``-valued)
are counted, under their vocabulary category: a many-valued slot never ends a
value, so counting it would stretch its category's half-life without bound.
Proposals are never applied here: :func:`propose_vocabulary` writes a new
vocabulary version for a human to review.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slotwise.processors.schema import AttributeSchema
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Fact

__all__ = [
    "CalibrationError",
    "HalfLifeFit",
    "Lifetimes",
    "chi2_quantile",
    "current_half_lives",
    "fit",
    "lifetimes_of",
    "propose_vocabulary",
]

_DAY_S = 86_400.0
_OPEN = frozenset({"current", "archived"})


class CalibrationError(SlotwiseError, ValueError):
    """A fit was asked for something it cannot estimate (a bad confidence level)."""


@dataclass(frozen=True, slots=True)
class Lifetimes:
    """What one category's fit needs: closed lifetimes, and censored ages, in days."""

    closed: int = 0
    closed_days: float = 0.0
    open: int = 0
    open_days: float = 0.0

    def __add__(self, other: Lifetimes) -> Lifetimes:
        return Lifetimes(
            self.closed + other.closed,
            self.closed_days + other.closed_days,
            self.open + other.open,
            self.open_days + other.open_days,
        )

    @property
    def exposure_days(self) -> float:
        return self.closed_days + self.open_days

    @property
    def naive_mean_days(self) -> float | None:
        """The mean of closed lifetimes only: what a fit ignoring censoring would use."""
        return self.closed_days / self.closed if self.closed else None


@dataclass(frozen=True, slots=True)
class HalfLifeFit:
    """One category's estimate. ``None`` for a half-life or a bound means infinite (no
    lifetime has ended yet: nothing says the category decays)."""

    category: str
    lifetimes: Lifetimes
    half_life_days: float | None
    low_days: float | None
    high_days: float | None
    confidence: float
    current_days: float | None = None

    @property
    def drift(self) -> float | None:
        """Proposed ÷ current half-life; None when either is infinite or unknown."""
        if self.half_life_days is None or not self.current_days:
            return None
        return self.half_life_days / self.current_days

    def contains(self, days: float) -> bool:
        low = self.low_days or 0.0
        return low <= days and (self.high_days is None or days <= self.high_days)


def fit(
    category: str,
    lifetimes: Lifetimes,
    *,
    confidence: float = 0.95,
    current_days: float | None = None,
) -> HalfLifeFit:
    """The censored exponential MLE of one category's half-life, with its interval."""
    if not 0.0 < confidence < 1.0:
        raise CalibrationError(f"confidence {confidence!r}: strictly between 0 and 1")
    d, exposure = lifetimes.closed, lifetimes.exposure_days
    if d == 0 or exposure <= 0:
        low = (
            math.log(2) * 2 * exposure / chi2_quantile(confidence, 2)
            if exposure > 0 and d == 0
            else None
        )
        return HalfLifeFit(category, lifetimes, None, low, None, confidence, current_days)
    alpha = 1.0 - confidence
    rate = d / exposure
    rate_low = chi2_quantile(alpha / 2, 2 * d) / (2 * exposure)
    rate_high = chi2_quantile(1 - alpha / 2, 2 * d + 2) / (2 * exposure)
    return HalfLifeFit(
        category,
        lifetimes,
        math.log(2) / rate,
        math.log(2) / rate_high,
        math.log(2) / rate_low if rate_low > 0 else None,
        confidence,
        current_days,
    )


def lifetimes_of(
    facts: Iterable[Fact],
    schema: AttributeSchema,
    *,
    as_of: datetime,
    closed: bool = True,
) -> dict[str, Lifetimes]:
    """Per category, the lifetimes the store's facts show at ``as_of``.

    Facts that are still true give censored ages (never negative: a fact valid
    from a future date has lived 0 days). With ``closed`` the superseded facts
    give the closed lifetimes too (the whole fit from one scan); without, only
    the censored part is counted, for a fit whose closed lifetimes come from the
    supersessions topic.
    """
    found: dict[str, Lifetimes] = {}
    for fact in facts:
        spec = schema.get(fact.attribute)
        if spec is None or not spec.single_valued:
            continue
        if fact.status in _OPEN:
            age = max(0.0, (as_of - fact.valid_from).total_seconds() / _DAY_S)
            part = Lifetimes(open=1, open_days=age)
        elif closed and fact.status == "superseded" and fact.valid_to is not None:
            lived = max(0.0, (fact.valid_to - fact.valid_from).total_seconds() / _DAY_S)
            part = Lifetimes(closed=1, closed_days=lived)
        else:
            continue
        found[spec.category] = found.get(spec.category, Lifetimes()) + part
    return found


def current_half_lives(schema: AttributeSchema) -> dict[str, float | None]:
    """Each category's half-life in the vocabulary, from its single-valued attributes."""
    current: dict[str, float | None] = {}
    for spec in schema:
        if spec.single_valued and spec.category not in current:
            current[spec.category] = spec.half_life_days
    return current


def propose_vocabulary(
    document: Mapping[str, Any],
    fits: Mapping[str, HalfLifeFit],
    *,
    min_events: int = 30,
) -> dict[str, Any]:
    """A new version of the vocabulary ``document`` with the fitted half-lives.

    A category changes only with at least ``min_events`` closed lifetimes and a
    finite estimate; attributes that never decay (null) stay null, since
    "identity does not decay" is a decision, not a measurement. What was fitted
    is recorded under ``calibration`` for the reviewer.
    """
    proposed = copy.deepcopy(dict(document))
    version = str(proposed.get("version", "1"))
    proposed["version"] = str(int(version) + 1) if version.isdigit() else f"{version}.1"
    applied: dict[str, Any] = {}
    for name, entry in proposed.get("attributes", {}).items():
        result = fits.get(str(entry.get("category")))
        if (
            result is None
            or result.half_life_days is None
            or result.lifetimes.closed < min_events
            or entry.get("half_life_days") is None
        ):
            continue
        entry["half_life_days"] = round(result.half_life_days)
        applied.setdefault(result.category, []).append(name)
    proposed["calibration"] = {
        "from_version": version,
        "min_events": min_events,
        "categories": {
            category: {
                "closed": f.lifetimes.closed,
                "censored": f.lifetimes.open,
                "exposure_days": round(f.lifetimes.exposure_days, 1),
                "half_life_days": _rounded(f.half_life_days),
                "interval_days": [_rounded(f.low_days), _rounded(f.high_days)],
                "confidence": f.confidence,
                "current_days": f.current_days,
                "applied_to": sorted(applied.get(category, [])),
            }
            for category, f in sorted(fits.items())
        },
    }
    return proposed


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


# -- the chi-square quantile, without scipy ---------------------------------------


def chi2_quantile(p: float, dof: int) -> float:
    """The ``p`` quantile of the chi-square distribution with ``dof`` degrees of freedom."""
    if not 0.0 <= p < 1.0 or dof < 0:
        raise CalibrationError(f"chi-square quantile of p={p!r}, dof={dof!r}")
    if dof == 0 or p == 0.0:
        return 0.0
    low, high = 0.0, max(1.0, float(dof))
    while _chi2_cdf(high, dof) < p:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if _chi2_cdf(middle, dof) < p:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0


def _chi2_cdf(x: float, dof: int) -> float:
    return _lower_gamma(dof / 2.0, x / 2.0)


def _lower_gamma(a: float, x: float) -> float:
    """The regularized lower incomplete gamma P(a, x) (Numerical Recipes' gammp)."""
    if x <= 0.0:
        return 0.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        n = a
        for _ in range(100_000):
            n += 1.0
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return min(1.0, total * math.exp(log_front))
    # Lentz's continued fraction for Q(a, x) = 1 - P(a, x).
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return max(0.0, 1.0 - math.exp(log_front) * h)
