"""Numbers from what a run observed: sustained rates, latency percentiles, slopes, run summaries.

Pure functions over samples, so they test without a stack.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from slotwise.loadtest.results import Figure, percentile

__all__ = [
    "Latencies",
    "Spread",
    "latencies",
    "overall_rate",
    "slope",
    "spread",
    "summarize_runs",
    "sustained_rate",
]

Progress = Sequence[tuple[float, float]]
"""``(seconds, records done)`` samples, in time order."""


def _crossing(samples: Progress, level: float) -> float | None:
    """When progress first reached ``level``, interpolated between the samples around it."""
    before: tuple[float, float] | None = None
    for at, done in samples:
        if done >= level:
            if before is None or done == before[1]:
                return at
            t0, d0 = before
            return t0 + (at - t0) * (level - d0) / (done - d0)
        before = (at, done)
    return None


def sustained_rate(samples: Progress, total: int, low: float = 0.1, high: float = 0.9) -> float:
    """Records per second between ``low`` and ``high`` of ``total``: start-up and tail left out.

    NaN when progress never reached ``high`` of the total.
    """
    start, end = _crossing(samples, low * total), _crossing(samples, high * total)
    if start is None or end is None or end <= start:
        return math.nan
    return (high - low) * total / (end - start)


def overall_rate(samples: Progress, total: int) -> float:
    """Records per second from the first progress seen to the last record: what a user waits.

    The clock starts at the sample before the first progress (the worker was
    ready then), not at the first progress, which would hide the first batch.
    """
    started: float | None = None
    previous = samples[0][0] if samples else None
    for at, done in samples:
        if done > 0:
            started = previous
            break
        previous = at
    end = _crossing(samples, total)
    if started is None or end is None or end <= started:
        return math.nan
    return total / (end - started)


@dataclass(frozen=True, slots=True)
class Latencies:
    """Seconds from produce to an effect, over the records that had it."""

    count: int
    missing: int
    p50: float
    p95: float
    p99: float
    max: float

    def figures(self, label: str) -> list[Figure]:
        return [
            Figure(f"{label} p50", self.p50 * 1000, "ms"),
            Figure(f"{label} p95", self.p95 * 1000, "ms"),
            Figure(f"{label} p99", self.p99 * 1000, "ms"),
            Figure(f"{label} max", self.max * 1000, "ms"),
            Figure(f"{label} measured", self.count, "records"),
            Figure(f"{label} missing", self.missing, "records"),
        ]


def latencies(produced: Mapping[str, float], seen: Mapping[str, float]) -> Latencies:
    """Latency of every produced record that was seen; the others count as missing."""
    values = [seen[k] - at for k, at in produced.items() if k in seen]
    return Latencies(
        count=len(values),
        missing=len(produced) - len(values),
        p50=percentile(values, 50),
        p95=percentile(values, 95),
        p99=percentile(values, 99),
        max=max(values) if values else math.nan,
    )


def slope(samples: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of ``(x, y)`` samples; NaN for fewer than two distinct x."""
    if len({x for x, _ in samples}) < 2:
        return math.nan
    xs, ys = [x for x, _ in samples], [y for _, y in samples]
    return statistics.linear_regression(xs, ys).slope


@dataclass(frozen=True, slots=True)
class Spread:
    """One figure over several runs: the median, and the lowest and highest run."""

    name: str
    unit: str
    median: float | None
    low: float | None
    high: float | None
    values: tuple[float | int | str | None, ...]

    def shown(self) -> tuple[str, str]:
        if self.median is None:
            texts = {str(v) for v in self.values if v is not None}
            return (", ".join(sorted(texts)) or "—", "")
        median = Figure(self.name, self.median).shown()
        if len(self.values) < 2 or self.low is None or self.high is None:
            return median, ""
        return median, f"{Figure('', self.low).shown()} - {Figure('', self.high).shown()}"


def spread(name: str, unit: str, values: Sequence[float | int | str | None]) -> Spread:
    numbers = [
        float(v)
        for v in values
        if isinstance(v, int | float) and not isinstance(v, bool) and not math.isnan(v)
    ]
    if not numbers:
        return Spread(name, unit, None, None, None, tuple(values))
    return Spread(name, unit, statistics.median(numbers), min(numbers), max(numbers), tuple(values))


def summarize_runs(runs: Sequence[Sequence[Figure]]) -> list[Spread]:
    """Each figure's spread over the runs, in the order figures first appear."""
    names: dict[str, str] = {}
    for figures in runs:
        for figure in figures:
            names.setdefault(figure.name, figure.unit)
    by_run = [{f.name: f.value for f in figures} for figures in runs]
    return [spread(name, unit, [run.get(name) for run in by_run]) for name, unit in names.items()]
