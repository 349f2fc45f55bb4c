"""What a benchmark leaves behind: one summary table on the terminal, one JSON file.

Every result file carries the machine it ran on and the client versions, so
two results can only be compared knowingly. Figures are rows of
``(name, value, unit)``; the JSON keeps them as numbers.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import confluent_kafka
from rich.console import Console
from rich.table import Table

from slotwise.topics.codec import dumps

__all__ = [
    "Figure",
    "environment",
    "median",
    "percentile",
    "print_summary",
    "summary_table",
    "write_result",
]


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured number with its unit."""

    name: str
    value: float | int | str | None
    unit: str = ""

    def shown(self) -> str:
        if self.value is None:
            return "—"
        if isinstance(self.value, float):
            return f"{self.value:,.3f}" if abs(self.value) < 100 else f"{self.value:,.0f}"
        if isinstance(self.value, int):
            return f"{self.value:,}"
        return self.value


def summary_table(title: str, figures: Sequence[Figure]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("unit")
    for figure in figures:
        table.add_row(figure.name, figure.shown(), figure.unit)
    return table


def print_summary(title: str, figures: Sequence[Figure], console: Console | None = None) -> None:
    (console or Console()).print(summary_table(title, figures))


def environment() -> dict[str, Any]:
    """The machine and client versions a result was measured with."""
    librdkafka, _ = confluent_kafka.libversion()
    return {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "confluent_kafka": confluent_kafka.version(),
        "librdkafka": librdkafka,
    }


def write_result(
    path: Path,
    scenario: str,
    figures: Sequence[Figure],
    *,
    config: Mapping[str, Any] | None = None,
    details: Mapping[str, Any] | None = None,
) -> Path:
    """Write the scenario's figures as JSON (creating the folder) and return the path."""
    document = {
        "scenario": scenario,
        "recorded_at": datetime.now(UTC).isoformat(),
        "environment": environment(),
        "config": dict(config or {}),
        "figures": {f.name: {"value": f.value, "unit": f.unit} for f in figures},
        "details": dict(details or {}),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dumps(document))
    return path


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0 to 100) by linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
