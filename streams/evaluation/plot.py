"""The precision-recall plot: the floor sweep as a curve, the other mechanisms as points."""

from __future__ import annotations

from pathlib import Path

from slotwise.streams.evaluation.scoring import Row, Scores

__all__ = ["write_pr_plot"]


def write_pr_plot(scores: Scores, path: Path, *, title: str) -> Path:
    """Write the plot as PNG; matplotlib's Agg backend, so no display is needed."""
    import matplotlib  # noqa: PLC0415 - imported only when a plot is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    figure, axes = plt.subplots(figsize=(7.5, 5.5), dpi=110)
    sweep = [r for r in scores.rows if r.floor is not None and r.recall is not None]
    if sweep:
        axes.plot(
            [r.recall or 0.0 for r in sweep],
            [r.precision or 0.0 for r in sweep],
            marker="o",
            color="tab:blue",
            label="MiniLM vector floor (sweep)",
        )
        for i, row in enumerate(sweep):
            axes.annotate(
                f"{row.floor:.2f}",
                (row.recall or 0.0, row.precision or 0.0),
                textcoords="offset points",
                # Staggered: high floors crowd the top left corner.
                xytext=(5, -12 - 10 * (i % 3) if (row.precision or 0) > 0.97 else 4),
                fontsize=8,
                color="tab:blue",
            )
    markers = {
        "exact": ("s", "tab:green"),
        "model": ("^", "tab:purple"),
        "pipeline": ("*", "tab:red"),
    }
    for row in scores.rows:
        if row.floor is not None or row.recall is None:
            continue
        key = next((k for k in markers if row.mechanism.startswith(k)), "pipeline")
        marker, colour = markers[key]
        axes.scatter(
            [row.recall],
            [row.precision if row.precision is not None else 1.0],
            marker=marker,
            s=140 if marker == "*" else 70,
            color=colour,
            label=_label(row),
            zorder=3,
        )
    axes.set_xlim(0, 1.02)
    axes.set_ylim(0, 1.05)
    axes.set_xlabel("recall")
    axes.set_ylabel("precision")
    axes.set_title(title, fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower left", fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return path


def _label(row: Row) -> str:
    if row.mechanism.startswith("pipeline"):
        return "offline pipeline: supersessions written (vs SUPERSEDE labels)"
    return row.mechanism
