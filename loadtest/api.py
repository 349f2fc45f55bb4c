"""``python -m slotwise.loadtest.api``: the HTTP read API against a direct Redis read, and the
client's publish → wait round trip.

One run, on fresh names on the local stack (:class:`~slotwise.loadtest.runner.Bench`):

1. a worker applies the demo conversation for one subject (10 current facts);
2. ``slotwise serve`` runs in its own process on 127.0.0.1;
3. ``GET /v1/subjects/{id}/facts`` is driven by ``wrk`` (Debian's; ``apt-get install
   wrk``) flat out for throughput, then at a fixed rate for p50/p99 — a Lua ``delay()``
   keeps each wrk thread on a schedule (wrk measures from the send, so a stall that
   delays later sends is not charged to them: coordinated omission, as with any
   closed-loop tool);
4. beside it, in the same run, the same subject's facts read straight from Redis
   (``RedisStore.facts``, the call the API makes) by one asyncio process, flat out and
   at the same fixed rate: the API's figures over these are the ratio that counts;
5. the client's publish → wait (read-your-writes) round trip at 5 observations/s.

Only loopback addresses are ever sent traffic, and every loop is bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from slotwise.client import AsyncClient, Observation
from slotwise.loadtest.measure import summarize_runs
from slotwise.loadtest.results import Figure, percentile, print_summary, write_result
from slotwise.loadtest.runner import Bench, BenchError
from slotwise.streams.config import Settings
from slotwise.streams.dev.demo import observations
from slotwise.streams.dev.testing import ChildProcess, free_port
from slotwise.streams.read.store import open_store
from slotwise.topics.codec import loads

__all__ = ["main"]

# Each wrk thread keeps its own schedule of ``rate`` requests a second over its connections.
_PACED = """
local ffi = require("ffi")
ffi.cdef[[ typedef struct { long tv_sec; long tv_usec; } sw_timeval;
           int gettimeofday(sw_timeval *tv, void *tz); ]]
local tv = ffi.new("sw_timeval")
local function now_ms()
  ffi.C.gettimeofday(tv, nil)
  return tonumber(tv.tv_sec) * 1000 + tonumber(tv.tv_usec) / 1000
end
local interval, due = 0, nil
function init(args)
  local rate = tonumber(args[1] or "0")
  interval = rate > 0 and 1000 / rate or 0
end
function delay()
  local now = now_ms()
  if due == nil then due = now end
  due = due + interval
  return due > now and due - now or 0
end
"""
_REPORT = """
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "errors": %d, "non2xx": %d, ' ..
    '"p50_us": %d, "p99_us": %d, "max_us": %d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99), latency.max))
end
"""


def _wrk(url: str, seconds: int, connections: int, rate_per_thread: float = 0) -> dict[str, Any]:
    if shutil.which("wrk") is None:
        raise BenchError("wrk is missing: apt-get install -y wrk")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write((_PACED if rate_per_thread else "") + _REPORT)
    argv = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "-s", script.name, url]
    if rate_per_thread:
        argv += ["--", str(rate_per_thread)]
    done = subprocess.run(argv, capture_output=True, check=True, timeout=seconds + 60)
    report: dict[str, Any] = loads(done.stdout.decode().strip().splitlines()[-1])
    report["rps"] = report["requests"] / (report["duration_us"] / 1e6)
    Path(script.name).unlink()
    return report


async def _redis_reads(
    settings: Settings, subject: str, seconds: float, concurrency: int, rate: float = 0
) -> dict[str, float]:
    """The same read straight from Redis: flat out with ``concurrency`` tasks, or paced."""
    store = open_store(settings)
    latencies: list[float] = []
    loop = asyncio.get_running_loop()
    start = loop.time()
    end = start + seconds

    async def one() -> None:
        began = time.perf_counter()
        facts = await store.facts(subject)
        latencies.append(time.perf_counter() - began)
        assert facts

    async def flat_out() -> None:
        while loop.time() < end:
            await one()

    try:
        if rate:
            tasks, n = [], 0
            while (due := start + n / rate) < end:
                await asyncio.sleep(max(0.0, due - loop.time()))
                tasks.append(asyncio.create_task(one()))
                n += 1
            await asyncio.gather(*tasks)
        else:
            await asyncio.gather(*(flat_out() for _ in range(concurrency)))
        elapsed = loop.time() - start
    finally:
        await store.close()
    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": percentile(latencies, 50) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
    }


async def _round_trips(settings: Settings, rate: float, count: int) -> list[float]:
    """Publish → wait (read-your-writes) for ``count`` observations started at ``rate``/s."""
    async with AsyncClient(settings) as memory:
        subjects = [f"agent-{uuid.uuid4().hex[:6]}-{i}" for i in range(10)]
        # One warm-up: the producer's connection and the first metadata are not the figure.
        warm = _turn(subjects[0], 0)
        await memory.publish(warm)
        await memory.wait(warm.subject_id, warm.observation_id, timeout=60)
        loop = asyncio.get_running_loop()
        start = loop.time()

        async def one(n: int) -> float:
            await asyncio.sleep(max(0.0, start + n / rate - loop.time()))
            turn = _turn(subjects[n % len(subjects)], n + 1)
            began = time.perf_counter()
            await memory.publish(turn)
            await memory.wait(turn.subject_id, turn.observation_id, timeout=60)
            return time.perf_counter() - began

        return list(await asyncio.gather(*(one(n) for n in range(count))))


def _turn(subject: str, n: int) -> Observation:
    from datetime import UTC, datetime  # noqa: PLC0415

    return Observation(
        observation_id=str(uuid.uuid4()),
        subject_id=subject,
        text=f"I'm a backend engineer at Company{n}.",
        observed_at=datetime.now(UTC),
    )


def _serve(bench: Bench) -> tuple[ChildProcess, str]:
    port = free_port()
    server = ChildProcess(
        [sys.executable, "-m", "slotwise.streams", "serve", "--port", str(port)],
        bench.workdir / "serve.log",
        env=bench.deployment.to_env(),
        name="slotwise serve",
    )
    bench.spawned.append(server)
    server.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        server.check_alive()
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return server, base
        except OSError:
            time.sleep(0.2)
    raise BenchError(f"slotwise serve did not answer:\n{server.log_tail()}")


def run(seconds: int, rate: float, connections: int, trips: int) -> list[Figure]:
    settings = Settings()
    with Bench(settings, Path(tempfile.mkdtemp(prefix="slotwise-api-")), partitions=3) as bench:
        bench.worker().wait_healthy()
        subject = f"ana-{uuid.uuid4().hex[:6]}"
        turns = observations(subject)

        async def seed() -> None:
            async with AsyncClient(bench.deployment) as memory:
                for turn in turns:
                    await memory.publish(turn)
                await memory.wait(subject, turns[-1].observation_id, timeout=120)

        asyncio.run(seed())
        _, base = _serve(bench)
        url = f"{base}/v1/subjects/{subject}/facts"
        _wrk(url, 3, connections)  # warm-up
        api_max = _wrk(url, seconds, connections)
        redis_max = asyncio.run(_redis_reads(bench.deployment, subject, seconds, connections))
        api_paced = _wrk(url, seconds, connections, rate_per_thread=rate / 2)
        redis_paced = asyncio.run(
            _redis_reads(bench.deployment, subject, seconds, connections, rate=rate)
        )
        round_trips = asyncio.run(_round_trips(bench.deployment, 5.0, trips))
    bad = api_max["errors"] + api_max["non2xx"] + api_paced["errors"] + api_paced["non2xx"]
    return [
        Figure("API facts throughput (wrk, flat out)", round(api_max["rps"], 1), "requests/s"),
        Figure("Redis facts read throughput (same run)", round(redis_max["rps"], 1), "reads/s"),
        Figure("API / Redis throughput", round(api_max["rps"] / redis_max["rps"], 3), "ratio"),
        Figure(f"API p50 at {rate:g}/s", round(api_paced["p50_us"] / 1000, 2), "ms"),
        Figure(f"API p99 at {rate:g}/s", round(api_paced["p99_us"] / 1000, 2), "ms"),
        Figure(f"API achieved rate at {rate:g}/s", round(api_paced["rps"], 1), "requests/s"),
        Figure(f"Redis p50 at {rate:g}/s", round(redis_paced["p50_ms"], 2), "ms"),
        Figure(f"Redis p99 at {rate:g}/s", round(redis_paced["p99_ms"], 2), "ms"),
        Figure(
            "API / Redis p99 at the fixed rate",
            round(api_paced["p99_us"] / 1000 / redis_paced["p99_ms"], 2),
            "ratio",
        ),
        Figure("API errors and non-2xx", int(bad), "requests"),
        Figure("client publish → wait p50 at 5/s", round(percentile(round_trips, 50) * 1000), "ms"),
        Figure("client publish → wait p99 at 5/s", round(percentile(round_trips, 99) * 1000), "ms"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m slotwise.loadtest.api", description=__doc__)
    parser.add_argument("--seconds", type=int, default=20, help="each wrk and Redis phase")
    parser.add_argument("--rate", type=float, default=200.0, help="the fixed rate, requests/s")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--trips", type=int, default=100, help="publish → wait round trips")
    parser.add_argument("--runs", type=int, default=1, help="runs; the table shows the median")
    parser.add_argument("--json", type=Path, default=Path("docs/results/api.json"))
    args = parser.parse_args(argv)
    runs = [run(args.seconds, args.rate, args.connections, args.trips) for _ in range(args.runs)]
    if len(runs) == 1:
        print_summary("HTTP read API and client round trip", runs[0])
    else:
        table = Table(title=f"HTTP read API and client round trip — median of {len(runs)} runs")
        for column in ("measure", "median", "min - max", "unit"):
            table.add_column(column)
        for spread in summarize_runs(runs):
            table.add_row(spread.name, *spread.shown(), spread.unit)
        Console().print(table)
    write_result(
        args.json,
        "api",
        runs[-1],
        config=vars(args) | {"json": str(args.json)},
        details={"runs": [{f.name: f.value for f in figures} for figures in runs]},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
