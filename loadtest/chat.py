"""The ``locomo`` scenario: real chat turns through the model path, the fake model answering.

The cascade scenario's traffic is generated, and every message in it states
something. Real chat mostly does not: greetings, questions, talk about other
people. This replays the LoCoMo conversations (:mod:`loadtest.locomo`, each
speaker a subject, turns in order) through the worker against the fake model
(:func:`loadtest.responders.bench`), and reports what the model cost per
observation beside throughput and decisions. ``--count`` takes that many
turns from the interleaved replay (all of them, once, by default; more than the
corpus holds replays it under fresh subjects).
"""

from __future__ import annotations

import itertools
import math
import uuid

from slotwise.loadtest.cost import cost_figures, gate_figures
from slotwise.loadtest.locomo import observations, read_turns
from slotwise.loadtest.measure import overall_rate, sustained_rate
from slotwise.loadtest.results import Figure
from slotwise.loadtest.runner import Bench
from slotwise.loadtest.scenarios import (
    Cpu,
    Follower,
    Options,
    RunResult,
    decision_figures,
    llm_figures,
    preload,
    profiled,
    stage_figures,
    start_workers,
    summed_metrics,
)

__all__ = ["locomo"]


def locomo(options: Options) -> RunResult:
    turns = read_turns()
    count = options.count or len(turns)
    replicas = math.ceil(count / len(turns))
    prefix = f"b{uuid.uuid4().hex[:6]}-"
    replay = list(itertools.islice(observations(turns, replicas, prefix=prefix), count))
    subject_ids = sorted({o.subject_id for o in replay})
    subjects = len(subject_ids)
    with Bench(options.settings, options.workdir, options.partitions) as bench:
        model = bench.fake_model(options.latency_ms, "slotwise.loadtest.responders:bench")
        topic = bench.catalogue.observations
        preload(bench, topic, replay, count, progress=options.progress)
        env = {**options.worker_env(), **bench.model_env(model, options.llm_concurrency)}
        workers = start_workers(bench, options, env)
        # Every turn ends in its watermark, fact or none, once its candidates are applied.
        follower = Follower(lambda: bench.applied_observations(subject_ids), workers)
        cpu = Cpu(*(w.pid for w in workers))
        with profiled(options, workers[0], "locomo"):
            follower.until(count, options.deadline_s)
        Follower(lambda: bench.committed_count(topic), workers).until(count, 120)
        worker_ms = cpu.per_record_ms(count)
        metrics = summed_metrics(workers)
    return RunResult(
        [
            Figure("observations", count, "records"),
            Figure("subjects", subjects, "subjects"),
            Figure("workers", options.workers, "processes"),
            Figure("model latency", options.latency_ms, "ms"),
            Figure(
                "sustained throughput", sustained_rate(follower.samples, count), "observations/s"
            ),
            Figure("overall throughput", overall_rate(follower.samples, count), "observations/s"),
            Figure("worker CPU per observation", worker_ms, "ms"),
            *llm_figures(metrics, count),
            *cost_figures(metrics, count, options.model_prices()),
            *gate_figures(metrics),
            *stage_figures(metrics),
            *decision_figures(metrics, count),
        ],
        {"progress": follower.samples},
    )
