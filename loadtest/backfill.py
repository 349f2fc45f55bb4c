"""The write path's latency while a dual-index migration backfills, bracketed.

    python -m slotwise.loadtest.backfill --facts 3000 --rate 100

A deployment is seeded in bulk with ``--facts`` vector rows (MiniLM, written
through the index a worker opens), then a worker with the fake model
(``--latency-ms`` a call) runs the nominal load (5 observations a second, as
``nominal``) in windows of ``--window`` seconds, fresh subjects each:

1. *before*: no migration;
2. ``slotwise migrate start --to st:<MiniLM's folder under another name>``
   (another model to the migration, the same weights: no download), then, once
   the worker has begun dual-writing (a short warm-up window, discarded: it
   loads the second model), *started*: dual writes, no backfill;
3. *backfill*: ``slotwise migrate backfill --rate R --batch N`` in its own
   process beside the load (the window starts once its first batch is
   recorded and is at most as long as the backfill is expected to last);
4. *after*: dual writes, the backfill done.

Reported: produce → applied p50/p95/p99 in each window, the backfill's p99
over the larger of *started* and *after* (the bracket against load drift),
*started* over *before* (the dual writes' cost to latency), the backfill's
achieved rows a second and whether it outlasted its window, and the load
average over the run. Every CLI runs as a subprocess with the deployment's
environment, as an operator runs it.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slotwise.loadtest.measure import Latencies
from slotwise.loadtest.results import Figure, print_summary, write_result
from slotwise.loadtest.runner import Bench, BenchError
from slotwise.loadtest.scenarios import Options, RunResult, paced_window
from slotwise.processors.model import VectorRow
from slotwise.sinks.redis.migration import Migration, MigrationStore
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import Settings

__all__ = ["Bracket", "backfill", "main", "seed_rows"]

RATE = 5.0  # observations a second: the nominal load
_PLACES = "Lisbon Porto Berlin Paris Madrid Rome Oslo Vienna Prague Dublin Sofia Riga".split()
_HOBBIES = "chess piano climbing tennis baking running painting rowing pottery sailing".split()
_WARM_S = 10.0


def seed_rows(n: int, subjects: int = 200) -> Iterator[VectorRow]:
    """``n`` distinct facts over ``subjects`` subjects, in a stable order."""
    for i in range(n):
        yield VectorRow(
            f"seed{i:06d}",
            f"seed-{i % subjects}",
            f"User plays {_HOBBIES[i % len(_HOBBIES)]} in {_PLACES[(i // 7) % len(_PLACES)]} "
            f"on day {i}.",
            "misc",
        )


@dataclass(frozen=True, slots=True)
class Bracket:
    """A window's latencies against the windows either side of it (seconds)."""

    before: Latencies
    during: Latencies
    after: Latencies

    @property
    def p99_ratio(self) -> float:
        """``during``'s p99 over the larger of the two bracketing p99s (> 1: it costs)."""
        outside = max(self.before.p99, self.after.p99)
        return self.during.p99 / outside if outside > 0 else math.nan

    @property
    def p99_added_ms(self) -> float:
        return (self.during.p99 - max(self.before.p99, self.after.p99)) * 1000


def backfill(options: Options, *, facts: int, rate: float, batch: int, window: float,
             model_dir: Path) -> RunResult:  # fmt: skip
    load_start = os.getloadavg()
    began = time.monotonic()
    with Bench(options.settings, options.workdir, options.partitions) as bench:
        model = bench.fake_model(options.latency_ms, "slotwise.loadtest.responders:bench")
        worker_env = {
            **options.worker_env(), **bench.model_env(model, options.llm_concurrency),
            "SLOTWISE_EMBEDDER": "minilm",
        }  # fmt: skip
        cli_env = {**os.environ, **bench.deployment.to_env(), "SLOTWISE_EMBEDDER": "minilm"}
        seed_s = _seed(bench.deployment, facts)
        worker = bench.worker(env=worker_env)
        worker.wait_healthy()
        paced_window(bench, options, RATE, _WARM_S, worker)  # warm-up, discarded
        before = paced_window(bench, options, RATE, window, worker)
        new_model = _renamed_minilm(bench.workdir, model_dir)
        _cli(cli_env, bench.workdir, "start", "--to", new_model, "--from", "minilm")
        paced_window(bench, options, RATE, _WARM_S, worker)  # the second model loads
        started = paced_window(bench, options, RATE, window, worker)
        during, filled = _during_backfill(
            bench, options, cli_env, worker=worker, facts=facts, rate=rate, batch=batch,
            window=window,
        )  # fmt: skip
        after = paced_window(bench, options, RATE, window, worker)
    load_end = os.getloadavg()
    bracket = Bracket(started, during, after)
    dual = started.p99 / before.p99 if before.p99 > 0 else math.nan
    figures = [
        Figure("seeded facts", facts, "rows"),
        Figure("seeding (bulk, MiniLM)", seed_s, "s"),
        Figure("backfill --rate", rate, "rows/s"),
        Figure("backfill --batch", batch, "rows"),
        Figure("backfill achieved", filled["rows_per_s"], "rows/s"),
        Figure("backfill rows", filled["rows"], "rows"),
        Figure("backfill wall time", filled["seconds"], "s"),
        Figure("backfill outlasted its window", str(filled["outlasted"]), ""),
        Figure("model latency", options.latency_ms, "ms"),
        Figure("write load", RATE, "observations/s"),
        *before.figures("applied, before"),
        *started.figures("applied, dual-writing"),
        *during.figures("applied, backfill running"),
        *after.figures("applied, after backfill"),
        Figure("backfill p99 / max(dual-writing, after) p99", bracket.p99_ratio, "ratio"),
        Figure("backfill p99 added", bracket.p99_added_ms, "ms"),
        Figure("dual-writing p99 / before p99", dual, "ratio"),
        Figure("load average at start (1/5/15 min)", _load(load_start), ""),
        Figure("load average at end (1/5/15 min)", _load(load_end), ""),
        Figure("run wall time", time.monotonic() - began, "s"),
    ]
    return RunResult(figures, {"backfill": filled, "new_model": new_model})


def _load(values: tuple[float, float, float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


def _seed(settings: Settings, facts: int) -> float:
    """Write ``facts`` rows into the deployment's collection as a worker's index would."""
    from slotwise.models.embedders import MiniLMEmbedder  # noqa: PLC0415 -- loads the model
    from slotwise.streams.read.vector_space import open_fact_index  # noqa: PLC0415

    async def run() -> float:
        store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
        index = await open_fact_index(settings, store, MiniLMEmbedder())
        began = time.monotonic()
        try:
            await index.setup()
            rows = list(seed_rows(facts))
            for at in range(0, len(rows), 500):
                index.add(rows[at : at + 500])
                await index.flush()
            return time.monotonic() - began
        finally:
            await index.close()
            await store.close()

    return asyncio.run(run())


def _renamed_minilm(workdir: Path, model_dir: Path) -> str:
    """MiniLM's folder under another name: another model to the migration, no download."""
    folder = workdir / "all-MiniLM-L6-v2-renamed"
    if not folder.exists():
        folder.symlink_to(model_dir, target_is_directory=True)
    return f"st:{folder}"


def _cli(env: Mapping[str, str], workdir: Path, *args: str) -> None:
    argv = [sys.executable, "-m", "slotwise.streams", "migrate", *args]
    done = subprocess.run(argv, env=dict(env), capture_output=True, text=True, timeout=180,
                          check=False, cwd=workdir)  # fmt: skip
    if done.returncode != 0:
        raise BenchError(f"migrate {args[0]} exited {done.returncode}: {done.stdout}{done.stderr}")


def _during_backfill(
    bench: Bench,
    options: Options,
    env: Mapping[str, str],
    *,
    worker: Any,
    facts: int,
    rate: float,
    batch: int,
    window: float,
) -> tuple[Latencies, dict[str, Any]]:
    argv = [sys.executable, "-m", "slotwise.streams", "migrate", "backfill",
            "--rate", f"{rate:g}", "--batch", str(batch)]  # fmt: skip
    log_path = bench.workdir / f"{bench.group_id}-backfill.log"
    with log_path.open("wb") as log:
        child = subprocess.Popen(argv, env=dict(env), stdout=log, stderr=subprocess.STDOUT)
        try:
            # It waits two poll intervals after start, then loads the model: measure from
            # its first recorded batch, for no longer than the rest should take.
            deadline = time.monotonic() + 120
            while (first := _migration(bench.deployment)).backfilled == 0:
                if child.poll() is not None or time.monotonic() > deadline:
                    raise BenchError(f"the backfill never recorded a batch; see {log_path}")
                time.sleep(0.2)
            t0, rows0 = time.monotonic(), first.backfilled
            length = min(window, max(5.0, (facts - rows0) / rate))
            measured = paced_window(bench, options, RATE, length, worker)
            outlasted = child.poll() is None
            child.wait(timeout=300)
            seconds = time.monotonic() - t0
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    if child.returncode != 0:
        raise BenchError(f"the backfill exited {child.returncode}; see {log_path}")
    done = _migration(bench.deployment)
    if not done.backfill_done:
        raise BenchError(f"the backfill exited without finishing; see {log_path}")
    copied = done.backfilled - rows0
    return measured, {
        "rows": done.backfilled,
        "seconds": seconds,
        "rows_per_s": copied / seconds if seconds > 0 else math.nan,
        "outlasted": outlasted,
        "window_s": length,
    }


def _migration(settings: Settings) -> Migration:
    async def read() -> Migration:
        store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
        try:
            found = await MigrationStore(store, settings.redis_prefix).get()
        finally:
            await store.close()
        if found is None:
            raise BenchError("no migration recorded")
        return found

    return asyncio.run(read())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m slotwise.loadtest.backfill")
    parser.add_argument("--facts", type=int, default=3000, help="rows seeded before the migration")
    parser.add_argument("--rate", type=float, default=100.0, help="backfill --rate, rows/s")
    parser.add_argument("--batch", type=int, default=256, help="backfill --batch, rows")
    parser.add_argument("--window", type=float, default=30.0, help="seconds of load per window")
    parser.add_argument("--latency-ms", type=float, default=320.0)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json-dir", type=Path, default=Path("bench-results"))
    args = parser.parse_args(argv)
    from slotwise.models.embedders import minilm_model_dir  # noqa: PLC0415 -- may download

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="slotwise-backfill-"))
    options = Options(Settings(), workdir, latency_ms=args.latency_ms)
    result = backfill(options, facts=args.facts, rate=args.rate, batch=args.batch,
                      window=args.window, model_dir=minilm_model_dir())  # fmt: skip
    print_summary("backfill", result.figures)
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    path = write_result(args.json_dir / "backfill.json", "backfill", result.figures,
                        config=config, details=result.details)  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
