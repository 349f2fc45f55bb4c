"""The consolidation benchmark: catch rate on a planted set, calls per subject, and the pass's
effect on the write path's latency while it runs.

    python -m slotwise.loadtest.consolidation --subjects 100 --latency-ms 320

Each planted subject holds a contradiction the write-time top-K cannot see:
"User is a backend engineer at Datadog." (cosine 0.19 to the newcomer), six
facts nearer the newcomer (0.47-0.50), then "User starts at Stripe on
Monday." The fake model (its own process, ``--latency-ms`` a call) answers
the slot question as a competent model would: Stripe fills Datadog's slot,
nothing else fills another's. Planting runs through the write path (each fact
a slot-match call, answered NONE), so the contradiction is in the store, both
facts current, before the pass.

Then the nominal write load (observations through the fake model's extractor,
5 a second) runs for ``--duration`` seconds three times: a warm-up (discarded),
alone, and with a consolidation pass over the planted subjects running beside
it. Reported: the
catch rate (planted contradictions superseded by the pass / planted), false
supersessions (any other the pass made), the pass's model calls per subject
and its wall time, and produce → applied p50/p95/p99 without and with the pass.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from slotwise.loadtest.fake_anthropic import Reply, ToolUse
from slotwise.loadtest.producer import publish
from slotwise.loadtest.responders import bench as bench_responder
from slotwise.loadtest.results import Figure, print_summary
from slotwise.loadtest.runner import Bench, BenchError
from slotwise.loadtest.scenarios import Follower, Options, RunResult, paced_window
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import Settings
from slotwise.topics.records import CandidateFact

__all__ = ["consolidation", "main", "planted", "responder"]

OLD = "User is a backend engineer at Datadog."
NEW = "User starts at Stripe on Monday."
BETWEEN = (
    "User starts a pottery class on Monday.",
    "User starts Spanish lessons on Monday.",
    "User starts a new gym routine on Monday.",
    "User starts therapy on Monday.",
    "User starts volunteering at the shelter on Monday.",
    "User starts a cooking course on Monday.",
)
_CANDIDATE = re.compile(r'Candidate observation about the user:\n  "(?P<text>.*?)"', re.DOTALL)
_LISTED = re.compile(r"^  (?P<number>\d+)\. (?P<text>.*)$", re.MULTILINE)
_T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def responder(request: dict[str, Any]) -> Reply:
    """The benchmark's model, plus the one fact it knows: Stripe fills Datadog's slot."""
    if (request.get("tool_choice") or {}).get("name") == "answer_slot":
        question = "\n".join(
            str(m.get("content")) for m in request.get("messages", []) if m.get("role") == "user"
        )
        found = _CANDIDATE.search(question)
        if found is not None and "Stripe" in found["text"]:
            for listed in _LISTED.finditer(question):
                if "Datadog" in listed["text"]:
                    return ToolUse({"memory": int(listed["number"])})
            return ToolUse({"memory": "NONE"})
    return bench_responder(request)


def planted(subject: str) -> list[CandidateFact]:
    texts = (OLD, *BETWEEN, NEW)
    return [
        CandidateFact(
            candidate_id=str(uuid.uuid4()),
            subject_id=subject,
            text=text,
            category="misc",
            observed_at=_T0 + timedelta(days=i),
        )
        for i, text in enumerate(texts)
    ]


def consolidation(options: Options) -> RunResult:
    subjects_n = options.subjects or 100
    duration = options.duration_s or 30.0
    rate = 5.0
    with Bench(options.settings, options.workdir, options.partitions) as bench:
        model = bench.fake_model(options.latency_ms, "slotwise.loadtest.consolidation:responder")
        env = {**options.worker_env(), **bench.model_env(model, options.llm_concurrency)}
        worker = bench.worker(env=env)
        worker.wait_healthy()
        subjects = [f"c{uuid.uuid4().hex[:6]}-{i}" for i in range(subjects_n)]
        records = [r for s in subjects for r in planted(s)]
        topic = bench.catalogue.candidates
        # Paced, so every fact's recorded_at (the log's clock) is its own millisecond.
        publish(records, options.settings.librdkafka(), topic, rate=500.0, track=False,
                progress=options.progress)  # fmt: skip
        Follower(lambda: bench.committed_count(topic), [worker]).until(len(records), 900)
        # A warm-up run first, discarded: the measured runs start from the same quiet state.
        paced_window(bench, options, rate, min(duration, 10.0), worker)
        alone = paced_window(bench, options, rate, duration, worker)
        passing, report, seconds = _with_pass(
            bench, options, env, subjects=subjects, rate=rate, duration=duration, worker=worker
        )
        caught, false = _settled(bench, subjects, worker)
    figures = [
        Figure("planted contradictions", subjects_n, "subjects"),
        Figure("catch rate", caught / subjects_n, "ratio"),
        Figure("false supersessions by the pass", false, "events"),
        Figure("model calls per subject per pass", report.get("calls_per_subject"), "calls"),
        Figure("pairs asked (never compared at write)", report.get("pairs_open"), "pairs"),
        Figure("pairs skipped (seen at write)", report.get("pairs_seen_at_write"), "pairs"),
        Figure("estimated cost of the pass", report.get("estimated_usd"), "USD"),
        Figure("pass wall time", seconds, "s"),
        Figure("model latency", options.latency_ms, "ms"),
        *alone.figures("applied, no pass"),
        *passing.figures("applied, pass running"),
    ]  # fmt: skip
    return RunResult(figures, {"pass": report})


def _with_pass(
    bench: Bench,
    options: Options,
    env: dict[str, str],
    *,
    subjects: list[str],
    rate: float,
    duration: float,
    worker: Any,
) -> tuple[Any, dict[str, Any], float]:
    argv = [sys.executable, "-m", "slotwise.streams", "consolidate", "--json"]
    for subject in subjects:
        argv += ["--subject", subject]
    child_env = {**os.environ, **bench.deployment.to_env(), **env}
    started = time.monotonic()
    with (bench.workdir / f"{bench.group_id}-pass.log").open("wb") as log:
        child = subprocess.Popen(argv, env=child_env, stdout=subprocess.PIPE, stderr=log)
        measured = paced_window(bench, options, rate, duration, worker)
        out, _ = child.communicate(timeout=1_800)
    seconds = time.monotonic() - started
    if child.returncode != 0:
        raise BenchError(f"the consolidation pass exited {child.returncode}; see {log.name}")
    return measured, json.loads(out.decode().strip().splitlines()[-1]), seconds


def _settled(bench: Bench, subjects: list[str], worker: Any) -> tuple[int, int]:
    """The catch once the worker has applied the pass's commands (no change for 5 s)."""
    seen, quiet_since, deadline = _caught(bench, subjects), time.monotonic(), time.monotonic() + 300
    while time.monotonic() - quiet_since < 5 and seen[0] < len(subjects):
        if time.monotonic() > deadline:
            break
        worker.check_alive()
        time.sleep(0.5)
        now = _caught(bench, subjects)
        if now != seen:
            seen, quiet_since = now, time.monotonic()
    return seen


def _caught(bench: Bench, subjects: list[str]) -> tuple[int, int]:
    async def read() -> tuple[int, int]:
        store = RedisStore.from_url(bench.settings.redis_url, prefix=bench.redis_prefix)
        caught = false = 0
        try:
            for subject in subjects:
                facts = {f.text: f for f in await store.facts(subject, include_history=True)}
                old, new = facts[OLD], facts[NEW]
                if old.status == "superseded" and old.superseded_by == new.fact_id:
                    caught += 1
                false += sum(
                    1 for f in facts.values() if f.status == "superseded" and f.text != OLD
                )
            return caught, false
        finally:
            await store.close()

    return asyncio.run(read())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m slotwise.loadtest.consolidation")
    parser.add_argument("--subjects", type=int, default=100)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of write load")
    parser.add_argument("--latency-ms", type=float, default=320.0)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="slotwise-consolidation-"))
    options = Options(
        Settings(), workdir, subjects=args.subjects, duration_s=args.duration,
        latency_ms=args.latency_ms,
    )  # fmt: skip
    result = consolidation(options)
    print_summary("consolidation", result.figures)
    if args.json is not None:
        body = {"figures": [asdict(f) for f in result.figures], **result.details}
        args.json.write_text(json.dumps(body, indent=2, default=str))


if __name__ == "__main__":
    main()
