"""The eval's outputs: the table printed for a person, and JSON and Markdown for CI and docs."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from slotwise.streams.evaluation.scoring import Row, Scores
from slotwise.topics.codec import dumps

__all__ = ["markdown", "print_report", "review_lines", "write_json"]

HARDEST = 10


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _day(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _cells(row: Row) -> list[str]:
    if row.note:
        return [row.mechanism, "—", "—", "—", "—", "—", row.note]
    return [
        row.mechanism,
        _pct(row.precision),
        _pct(row.recall),
        f"{row.hits}/{row.flagged}",
        _day(row.missed_per_day),
        _day(row.false_per_day),
        "",
    ]


_HEADERS = [
    "mechanism",
    "precision",
    "recall",
    "right/flagged",
    "missed conflicts /day",
    "false supersessions /day",
    "note",
]


def print_report(scores: Scores, console: Console, *, label: str) -> None:
    table = Table(title=f"slotwise eval — {label}", title_justify="left")
    for header in _HEADERS:
        table.add_column(header, justify="left" if header in ("mechanism", "note") else "right")
    for row in scores.rows:
        table.add_row(*_cells(row))
    console.print(table)
    console.print(
        "per day: 432,000 writes at an 11 % conflict rate (the article's arithmetic on P and R)"
    )
    ex = scores.extraction
    console.print(
        f"extraction ({ex.source}): precision {_pct(ex.precision)}, recall {_pct(ex.recall)} "
        f"({ex.hits} right of {ex.extracted} extracted, {ex.labelled} labelled)"
        + (
            f"; erase requests {ex.erase_hits}/{ex.erase_labelled} found, "
            f"{ex.erase_emitted} emitted"
            if ex.erase_labelled or ex.erase_emitted
            else ""
        )
    )
    for line in review_lines(scores):
        console.print(line)
    console.print(
        f"decisions right: {scores.correct}/{scores.pairs}; "
        f"mix {dict(sorted(scores.decisions.items()))}; "
        f"false supersessions: {len(scores.false_supersessions)}"
    )
    kinds = Table(title="per kind", title_justify="left")
    for header in ("kind", "pairs", "right", "supersede: expected", "found", "false"):
        kinds.add_column(header, justify="left" if header == "kind" else "right")
    for kind in sorted(scores.kinds, key=lambda k: k.kind):
        kinds.add_row(
            kind.kind,
            str(kind.pairs),
            str(kind.correct),
            str(kind.supersessions_expected),
            str(kind.supersessions_found),
            str(kind.false_supersessions),
        )
    console.print(kinds)
    if scores.disagreements:
        shown = Table(title=f"disagreements ({len(scores.disagreements)})", title_justify="left")
        for header in ("pair", "kind", "expected", "got", "why"):
            shown.add_column(header, overflow="fold")
        for item in scores.disagreements:
            shown.add_row(item.pair_id, item.kind, item.expected, item.got, item.why)
        console.print(shown)


def review_lines(scores: Scores) -> list[str]:
    """The deletion-intent and review-queue rows, as printed under the table."""
    lines: list[str] = []
    de = scores.deletion
    if de is not None:
        lines.append(
            f"deletion intent: recall {_pct(de.recall)} ({de.honoured}/{de.requests} requests "
            f"honoured, {de.to_review} asked of a human); look-alike erasures "
            f"{de.lookalike_erasures}/{de.non_requests} (review questions "
            f"{de.lookalike_reviews}); wider than asked {de.wider}"
        )
    rv = scores.review
    if rv is not None:
        lines.append(
            f"caught (supersession or review): {_pct(rv.caught_share)} ({rv.caught}/"
            f"{rv.changes} true changes); review noise: {_pct(rv.noise_share)} "
            f"({rv.noise}/{rv.review_items} review items were not changes)"
        )
    return lines


def markdown(scores: Scores) -> str:
    """The mechanism table as Markdown (what the README shows)."""
    lines = ["| " + " | ".join(_HEADERS[:-1]) + " |", "|---|" + "---:|" * (len(_HEADERS) - 2)]
    for row in scores.rows:
        cells = _cells(row)
        if row.note:
            cells = [row.mechanism, "—", "—", "—", "—", row.note]
        lines.append("| " + " | ".join(cells[: len(_HEADERS) - 1]) + " |")
    return "\n".join(lines) + "\n"


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def write_json(scores: Scores, path: Path, **context: Any) -> Path:
    document = {**context, **_plain(scores)}
    ex = scores.extraction
    document["extraction"]["precision"] = ex.precision
    document["extraction"]["recall"] = ex.recall
    if scores.deletion is not None:
        document["deletion"]["recall"] = scores.deletion.recall
    if scores.review is not None:
        document["review"]["caught_share"] = scores.review.caught_share
        document["review"]["noise_share"] = scores.review.noise_share
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dumps(document))
    return path
