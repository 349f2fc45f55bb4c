"""The peer scenario of ``python -m slotwise.loadtest``: slotwise and Mem0 on the same observations.

Both get the same generated conversation (same seed, same subjects), a fake
model at the same latency in a process of its own, and the same embedder.
slotwise runs as a worker (the cascade of the ``cascade`` scenario); Mem0 runs
as ``python -m slotwise.loadtest.mem0_peer`` in a fresh process (its telemetry switch
is read once, at import). Reported for both: writes per second from the first
write to the last, and how many single-valued slots end with two or more
contradictory current memories, judged by the same function
(:func:`~loadtest.generator.contradictory_slots`) against the same truth.

When mem0ai is not installed, the Mem0 half reports that and slotwise's
half still runs.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.loadtest.measure import overall_rate, sustained_rate
from slotwise.loadtest.mem0_peer import mem0_installed
from slotwise.loadtest.results import Figure
from slotwise.loadtest.runner import Bench
from slotwise.loadtest.scenarios import SCHEMA, Follower, Options, RunResult, llm_figures, preload
from slotwise.loadtest.tally import Tally, contradictory_slots, tallied
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.records import Fact

__all__ = ["mem0"]


def mem0(options: Options) -> RunResult:
    count, subjects = options.sized(2_000, 100)
    tally = Tally()
    config = WorkloadConfig(subjects=subjects, count=count, seed=options.seed)
    writes = list(tallied(generate(config, SCHEMA), SCHEMA, tally))
    subject_ids = sorted({w.subject_id for w in writes})
    changed = sum(1 for values in tally.stated.values() if len(values) > 1)
    with Bench(options.settings, options.workdir, options.partitions) as bench:
        model = bench.fake_model(options.latency_ms, "slotwise.loadtest.responders:bench")
        topic = bench.catalogue.observations
        preload(bench, topic, (w.observation() for w in writes), count)
        worker = bench.worker(
            env={**options.worker_env(), **bench.model_env(model, options.llm_concurrency)}
        )
        worker.wait_healthy()
        follower = Follower(lambda: bench.applied_observations(subject_ids), [worker])
        follower.until(count, options.deadline_s)
        Follower(lambda: bench.committed_count(topic), [worker]).until(count, 120)
        metrics = worker.metrics()
        current = asyncio.run(_current_facts(bench, subject_ids))
        worker.stop()  # Mem0 gets the machine to itself, as slotwise had
        peer = _run_mem0(bench, options, subjects, count)
    ours = overall_rate(follower.samples, count)
    memories = {s: [f.text for f in facts] for s, facts in current.items()}
    ours_contradictory = len(contradictory_slots(memories, tally))
    figures = [
        Figure("observations", count, "records"),
        Figure("subjects", subjects, "subjects"),
        Figure("model latency", options.latency_ms, "ms"),
        Figure("slots whose value changed", changed, "slots"),
        Figure("slotwise writes/s", ours, "observations/s"),
        Figure(
            "slotwise sustained writes/s", sustained_rate(follower.samples, count), "observations/s"
        ),
        Figure("slotwise slots with 2+ current values", ours_contradictory, "slots"),
        Figure(
            "slotwise single-valued slots with 2+ current facts", _doubled_slots(current), "slots"
        ),
        *llm_figures(metrics, count),
    ]
    if isinstance(peer, str):
        figures.append(Figure("mem0", peer))
        return RunResult(figures, {"mem0": peer})
    theirs = float(peer["mem0 throughput"]["value"])
    figures += [
        Figure("mem0 writes/s", theirs, "observations/s"),
        Figure("mem0 failed writes", peer["mem0 failed writes"]["value"], "observations"),
        Figure(
            "mem0 slots with 2+ current values",
            peer["mem0 slots with 2+ current values"]["value"],
            "slots",
        ),
        Figure("slotwise / mem0 writes/s", ours / theirs if theirs else float("nan"), "ratio"),
    ]
    return RunResult(figures, {"mem0": peer})


async def _current_facts(bench: Bench, subjects: list[str]) -> dict[str, list[Fact]]:
    store = RedisStore.from_url(bench.settings.redis_url, prefix=bench.redis_prefix)
    try:
        return {subject: await store.facts(subject) for subject in subjects}
    finally:
        await store.close()


def _doubled_slots(current: dict[str, list[Fact]]) -> int:
    """Single-valued attributes with more than one current fact: must be zero."""
    doubled = 0
    for facts in current.values():
        per_slot = Counter(f.attribute for f in facts if f.attribute is not None)
        doubled += sum(
            1
            for attribute, n in per_slot.items()
            if n > 1 and (spec := SCHEMA.get(attribute)) is not None and spec.single_valued
        )
    return doubled


def _run_mem0(
    bench: Bench, options: Options, subjects: int, count: int
) -> dict[str, dict[str, float]] | str:
    """Mem0's figures from its own process, or why it did not run."""
    if not mem0_installed():
        return "not installed (pip install --no-deps mem0ai; see loadtest/mem0_peer.py)"
    model = bench.fake_model(options.latency_ms, "slotwise.loadtest.mem0_peer:responder")
    result = bench.workdir / f"{bench.group_id}-mem0.json"
    log = bench.workdir / f"{bench.group_id}-mem0.log"
    argv = [
        sys.executable, "-m", "slotwise.loadtest.mem0_peer", "--subjects", str(subjects),
        "--count", str(count), "--seed", str(options.seed), "--latency-ms",
        str(options.latency_ms), "--base-url", model.base_url, "--concurrency",
        str(min(options.llm_concurrency, subjects)), "--json", str(result),
    ]  # fmt: skip
    with log.open("wb") as out:
        done = subprocess.run(
            argv, stdout=out, stderr=subprocess.STDOUT, timeout=options.deadline_s, check=False
        )
    if done.returncode != 0 or not result.exists():
        tail = "\n".join(Path(log).read_text(errors="replace").splitlines()[-15:])
        return f"failed (exit {done.returncode}): {tail}"
    figures: dict[str, dict[str, float]] = json.loads(result.read_text())["figures"]
    return figures
