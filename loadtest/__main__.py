"""``python -m slotwise.loadtest``: run named benchmark scenarios, print one table each, write JSON.

    python -m slotwise.loadtest exact cascade --runs 3
    python -m slotwise.loadtest all                      # exact cascade nominal burst mem0
    python -m slotwise.loadtest soak --runs 1 --count 1000000
    python -m slotwise.loadtest erasure --runs 1 --count 10000
    python -m slotwise.loadtest locomo --runs 1          # LoCoMo's turns, what the model costs
    SLOTWISE_EXTRACT_WINDOW_MS=300000 python -m slotwise.loadtest locomo  # turns batched a call

Every run starts from fresh topics, a fresh Redis prefix and fresh Milvus
collections on the local stack (``slotwise stack up``), and removes them
after. A scenario's table shows, per figure, the median of its runs and the
lowest and highest run; ``<json-dir>/<scenario>.json`` keeps every run.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from slotwise.loadtest.chat import locomo
from slotwise.loadtest.consolidation import consolidation
from slotwise.loadtest.erasure import erasure
from slotwise.loadtest.latency import burst, nominal
from slotwise.loadtest.measure import Spread, summarize_runs
from slotwise.loadtest.peer import mem0
from slotwise.loadtest.results import Figure, write_result
from slotwise.loadtest.scenarios import Options, RunResult, cascade, exact
from slotwise.loadtest.soak import soak
from slotwise.models.pricing import Prices, card
from slotwise.streams.config import Settings
from slotwise.streams.dev.stack import Stack, StackError

__all__ = ["SCENARIOS", "main", "run_scenario"]

SCENARIOS: dict[str, Callable[[Options], RunResult]] = {
    "exact": exact,
    "cascade": cascade,
    "locomo": locomo,
    "nominal": nominal,
    "burst": burst,
    "mem0": mem0,
    "soak": soak,
    "erasure": erasure,
    "consolidation": consolidation,
}
ALL = ("exact", "cascade", "nominal", "burst", "mem0")

_console = Console()


def run_scenario(name: str, options: Options, runs: int) -> tuple[list[Spread], list[RunResult]]:
    """Run one scenario ``runs`` times; each figure's spread, and every run."""
    results = []
    for run in range(runs):
        _console.log(f"{name}: run {run + 1} of {runs}")
        result = SCENARIOS[name](replace(options, run=run))
        results.append(result)
        _console.log(
            f"{name}: run {run + 1}: "
            + "; ".join(
                f"{f.name} {f.shown()}"
                for f in result.figures
                if "throughput" in f.name or "p99" in f.name or "ratio" in f.unit
            )
        )
    return summarize_runs([r.figures for r in results]), results


def table(name: str, spreads: Sequence[Spread], runs: int) -> Table:
    shown = Table(
        title=f"{name} — median of {runs} run{'s' if runs > 1 else ''}", title_justify="left"
    )
    shown.add_column("measure")
    shown.add_column("median", justify="right")
    shown.add_column("min - max", justify="right")
    shown.add_column("unit")
    for spread in spreads:
        median, low_high = spread.shown()
        shown.add_row(spread.name, median, low_high, spread.unit)
    return shown


def _document(spreads: Sequence[Spread], results: Sequence[RunResult]) -> dict[str, Any]:
    return {
        "spread": {
            s.name: {
                "median": s.median,
                "min": s.low,
                "max": s.high,
                "unit": s.unit,
                "runs": list(s.values),
            }
            for s in spreads
        },
        "runs": [
            {
                "figures": {f.name: {"value": f.value, "unit": f.unit} for f in r.figures},
                "details": r.details,
            }
            for r in results
        ],
    }


def _parser(settings: Settings) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m slotwise.loadtest",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("scenarios", nargs="+", choices=[*SCENARIOS, "all"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, help="records per run (scenario default if unset)")
    parser.add_argument("--subjects", type=int, help="subjects (scenario default if unset)")
    parser.add_argument("--duration", type=float, help="nominal/burst: seconds of traffic")
    parser.add_argument("--latency-ms", type=float, default=320.0, help="the fake model's")
    parser.add_argument(
        "--llm-concurrency", type=int, default=256, help="the worker's model calls in flight"
    )
    parser.add_argument(
        "--max-in-flight",
        type=int,
        help="the worker's records in flight before it pauses fetching (default: the product's)",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="exact, cascade: worker processes in the group"
    )
    parser.add_argument("--partitions", type=int, default=settings.partitions)
    parser.add_argument(
        "--no-baseline", action="store_true", help="exact: skip the same-run physical ceiling"
    )
    parser.add_argument("--baseline-records", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--deadline", type=float, default=1_800.0, help="seconds a run may take before it fails"
    )
    parser.add_argument("--json-dir", type=Path, default=Path("bench-results"))
    parser.add_argument(
        "--profile-dir", type=Path, help="record py-spy stacks of the worker (exact, cascade) here"
    )
    parser.add_argument("--workdir", type=Path, help="process logs (default: a temp folder)")
    parser.add_argument("--progress", action="store_true", help="show pre-load progress bars")
    listed = card(settings.llm_model).prices
    for direction, price in asdict(listed).items():
        parser.add_argument(
            f"--price-{direction.replace('_', '-')}",
            type=float,
            default=price,
            help=f"USD per million {direction.replace('_', ' ')} tokens "
            f"(default: {settings.llm_model}'s list price, {price:g})",
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING)
    # A run stopped from outside still stops its processes and deletes what it created
    # (a background job starts with SIGINT ignored; SIGTERM would skip the clean-up).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    settings = Settings()
    args = _parser(settings).parse_args(argv)
    names = list(dict.fromkeys(n for s in args.scenarios for n in (ALL if s == "all" else (s,))))
    if args.profile_dir is not None and shutil.which("py-spy") is None:
        # Checked before anything starts: a run that fails at its first profile has
        # already paid for its pre-load.
        _console.print("[red]--profile-dir needs py-spy:[/] pip install py-spy (make setup does)")
        return 2
    try:
        Stack(settings).up()
    except StackError as exc:
        _console.print(f"[red]the local stack did not come up:[/] {exc}")
        return 1
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="slotwise-bench-"))
    options = Options(
        settings=settings, workdir=workdir, partitions=args.partitions, count=args.count,
        subjects=args.subjects, duration_s=args.duration, latency_ms=args.latency_ms,
        llm_concurrency=args.llm_concurrency, max_in_flight=args.max_in_flight,
        workers=args.workers, baseline=not args.no_baseline,
        baseline_records=args.baseline_records, seed=args.seed,
        deadline_s=args.deadline, profile_dir=args.profile_dir, progress=args.progress,
        prices=Prices(args.price_input, args.price_output, args.price_cache_read,
                      args.price_cache_write),
    )  # fmt: skip
    _console.log(f"process logs in {workdir}")
    for name in names:
        spreads, results = run_scenario(name, options, args.runs)
        _console.print(table(name, spreads, args.runs))
        medians = [
            Figure(s.name, s.median if s.median is not None else s.shown()[0], s.unit)
            for s in spreads
        ]
        config = {
            "runs": args.runs,
            "argv": sys.argv[1:],
            "partitions": args.partitions,
            "latency_ms": args.latency_ms,
            "llm_concurrency": args.llm_concurrency,
            "max_in_flight": args.max_in_flight,
            "workers": args.workers,
            "seed": args.seed,
            "model": settings.llm_model,
            # What the workers inherit from this environment and the cost depends on.
            "extract_gate": settings.extract_gate,
            "extract_window_ms": settings.extract_window_ms,
            "extract_window_turns": settings.extract_window_turns,
            "prices_usd_per_million_tokens": asdict(options.model_prices()),
        }
        path = write_result(
            args.json_dir / f"{name}.json",
            name,
            medians,
            config=config,
            details=_document(spreads, results),
        )
        _console.log(f"{name}: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
