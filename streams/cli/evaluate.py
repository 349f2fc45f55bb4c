"""``slotwise eval PAIRS.jsonl [--turns TURNS.jsonl] [--deletion DELETION.jsonl] [--out DIR]
[--end-to-end]``.

Measures matching and extraction on a labelled set
(“A contradiction is only visible when memories share a key”): the table per
mechanism, the breakdown per kind, the disagreements, a PR plot and the JSON
results in ``--out``. Without ``--end-to-end`` the real stages run in-process
over the in-memory ports; with it every pair is replayed through real topics
and a running worker and read back from Redis and the output topics. Exit
status 1 when any false supersession was written, so CI can hold that line.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from slotwise.streams.config import Settings
from slotwise.streams.evaluation.data import DatasetError, read_pairs, read_turns

__all__ = ["evaluate"]

# Wide enough for the table when the output is a file or a CI log.
_out = Console(width=200) if not Console().is_terminal else Console()
_err = Console(stderr=True)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_err,
        transient=True,
    )


def evaluate(
    pairs_path: Annotated[
        Path, typer.Argument(metavar="PAIRS.jsonl", help="Labelled slot pairs (datasets/).")
    ],
    turns: Annotated[
        Path | None,
        typer.Option("--turns", metavar="TURNS.jsonl", help="Labelled turns for extraction P/R."),
    ] = None,
    deletion: Annotated[
        Path | None,
        typer.Option(
            "--deletion",
            metavar="DELETION.jsonl",
            help="Labelled deletion requests and look-alikes, scored with the split's own.",
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option("--out", metavar="DIR", help="Where results.json, table.md and pr.png go."),
    ] = Path("eval-results"),
    end_to_end: Annotated[
        bool,
        typer.Option(
            "--end-to-end",
            help="Replay every pair through the real topics and a running worker, and read "
            "the decisions back from Redis and the supersession and review topics.",
        ),
    ] = False,
) -> None:
    """Score matching and extraction on a labelled set; exit 1 on any false supersession."""
    from slotwise.streams.evaluation.deletion import (  # noqa: PLC0415
        DeletionOutcome,
        deletion_cases,
        read_deletions,
        run_deletions,
    )
    from slotwise.streams.evaluation.offline import (  # noqa: PLC0415
        PairOutcome,
        TurnOutcome,
        run_pairs,
        run_turns,
    )
    from slotwise.streams.evaluation.plot import write_pr_plot  # noqa: PLC0415
    from slotwise.streams.evaluation.report import markdown, print_report, write_json  # noqa: PLC0415
    from slotwise.streams.evaluation.scoring import score  # noqa: PLC0415
    from slotwise.streams.evaluation.stages import configured_stages  # noqa: PLC0415

    started = time.monotonic()
    try:
        pairs = read_pairs(pairs_path)
        labelled_turns = read_turns(turns) if turns is not None else []
        cases = read_deletions(deletion) if deletion is not None else []
    except DatasetError as exc:
        _err.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    settings = Settings()
    stages = configured_stages(settings)
    with _progress() as progress:
        turn_task = progress.add_task("turns", total=len(labelled_turns))
        pair_task = progress.add_task(
            "pairs (end to end)" if end_to_end else "pairs", total=len(pairs)
        )

        cases += deletion_cases(pairs, labelled_turns)
        deletion_task = progress.add_task("deletion intent", total=len(cases))

        async def in_process() -> tuple[
            list[TurnOutcome], list[PairOutcome], list[DeletionOutcome]
        ]:
            # One event loop for all: a model client belongs to the loop it was opened on.
            turned = await run_turns(stages, labelled_turns, lambda: progress.advance(turn_task))
            asked = await run_deletions(stages, cases, lambda: progress.advance(deletion_task))
            if end_to_end:
                return turned, [], asked
            paired = await run_pairs(stages, pairs, lambda: progress.advance(pair_task))
            return turned, paired, asked

        turn_outcomes, outcomes, deletion_outcomes = asyncio.run(in_process())
        if end_to_end:
            from slotwise.streams.evaluation.end_to_end import replay  # noqa: PLC0415

            outcomes = replay(settings, stages, pairs, lambda: progress.advance(pair_task))
    scores = score(pairs, outcomes, labelled_turns, turn_outcomes, (cases, deletion_outcomes))
    mode = "end to end" if end_to_end else "in-process"
    label = f"{pairs_path.name}, {stages.description}, {mode}"
    print_report(scores, _out, label=label)
    out.mkdir(parents=True, exist_ok=True)
    write_json(
        scores,
        out / "results.json",
        pairs_file=str(pairs_path),
        turns_file=None if turns is None else str(turns),
        deletion_file=None if deletion is None else str(deletion),
        mode=mode,
        stages=stages.description,
        seconds=round(time.monotonic() - started, 1),
    )
    (out / "table.md").write_text(markdown(scores), encoding="utf-8")
    write_pr_plot(scores, out / "pr.png", title=f"slotwise eval: {label}")
    _out.print(
        f"results in {out}/ (results.json, table.md, pr.png) in {time.monotonic() - started:.0f} s"
    )
    if scores.false_supersessions:
        _err.print(
            f"[red]{len(scores.false_supersessions)} false supersession(s): "
            f"{', '.join(scores.false_supersessions)}[/red]"
        )
        raise typer.Exit(1)
