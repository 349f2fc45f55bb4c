"""The latency scenarios of ``python -m slotwise.loadtest``: nominal (5 observations/s)
and burst (50/s).

A worker with the fake model (320 ms a call) is started and warmed up first
(its group joined, its model connection open, its first Milvus search done),
then observations are produced at the target rate for ``--duration`` seconds.
Each observation's produce time is kept; the run notes when Redis published
its watermark (the moment a reader waiting on it would return: *applied*) and
when a ``read_committed`` subscriber first saw the supersession event it
caused. Both are end to end: produce, extraction by the model, the
transaction, the candidate's resolution (and its slot-match call, for the
free-text tail), the apply, the next transaction.
"""

from __future__ import annotations

import time

from slotwise.loadtest.measure import latencies
from slotwise.loadtest.producer import publish
from slotwise.loadtest.results import Figure
from slotwise.loadtest.runner import Bench, SupersessionListener, WatermarkListener
from slotwise.loadtest.scenarios import Follower, Options, RunResult, llm_figures, workload

__all__ = ["burst", "nominal", "paced"]

_WARM_UP = 20
_SETTLE_S = 3.0


def nominal(options: Options) -> RunResult:
    return paced(options, rate=5.0, default_duration_s=60.0)


def burst(options: Options) -> RunResult:
    return paced(options, rate=50.0, default_duration_s=30.0)


def paced(options: Options, *, rate: float, default_duration_s: float) -> RunResult:
    duration = options.duration_s or default_duration_s
    count = max(1, round(rate * duration))
    writes = workload(options, count, options.subjects or 1_000)
    subjects = sorted({w.subject_id for w in writes})
    warm = workload(options, _WARM_UP, 10)
    with Bench(options.settings, options.workdir, options.partitions) as bench:
        model = bench.fake_model(options.latency_ms, "slotwise.loadtest.responders:bench")
        worker = bench.worker(
            env={**options.worker_env(), **bench.model_env(model, options.llm_concurrency)}
        )
        worker.wait_healthy()
        topic = bench.catalogue.observations
        publish(
            (w.observation() for w in warm),
            options.settings.librdkafka(),
            topic,
            rate=None,
            track=False,
            progress=False,
        )
        warm_subjects = sorted({w.subject_id for w in warm})
        Follower(lambda: bench.applied_observations(warm_subjects), [worker]).until(_WARM_UP, 180)
        baseline_metrics = worker.metrics()
        marks = WatermarkListener(options.settings.redis_url, bench.redis_prefix).start()
        superseded = SupersessionListener(
            options.settings, bench.catalogue.supersessions, options.partitions
        ).start()
        try:
            report = publish(
                (w.observation() for w in writes),
                options.settings.librdkafka(),
                topic,
                rate=rate,
                total=count,
                progress=options.progress,
            )
            Follower(lambda: bench.applied_observations(subjects), [worker]).until(count, 300)
            Follower(lambda: bench.committed_count(topic), [worker]).until(count + _WARM_UP, 120)
            _settle(superseded)
        finally:
            marks.stop()
            superseded.stop()
        metrics = worker.metrics()
    delta = {k: v - baseline_metrics.get(k, 0.0) for k, v in metrics.items()}
    applied = latencies(report.produced_at, marks.seen)
    caused = {k: report.produced_at[k] for k in superseded.seen if k in report.produced_at}
    expected = sum(1 for w in writes if w.kind == "contradict" and not w.out_of_order)
    return RunResult(
        [
            Figure("target rate", rate, "observations/s"),
            Figure("achieved rate", report.achieved_rate, "observations/s"),
            Figure("observations", count, "records"),
            Figure("model latency", options.latency_ms, "ms"),
            *applied.figures("produce → applied"),
            *latencies(caused, superseded.seen).figures("produce → supersession")[:-1],
            Figure("contradictions produced (in order)", expected, "records"),
            *llm_figures(delta, count),
        ],
        {
            "applied_s": {
                k: marks.seen[k] - at for k, at in report.produced_at.items() if k in marks.seen
            },
        },
    )


def _settle(listener: SupersessionListener) -> None:
    """Until no new supersession event has arrived for a few seconds (at most a minute)."""
    deadline = time.monotonic() + 60
    last, quiet_since = listener.events, time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - quiet_since < _SETTLE_S:
        time.sleep(0.5)
        if listener.events != last:
            last, quiet_since = listener.events, time.monotonic()
