"""The throughput scenarios of ``python -m slotwise.loadtest``: exact and cascade.

Each scenario run starts from nothing (a fresh :class:`~loadtest.runner.Bench`),
pre-loads its input, starts the workers and follows them from their launch
until everything is applied, and returns its figures. Input is pre-loaded
before the workers start, so the producer never competes with them for the
CPU and the workers' rate is their own: the *sustained* rate is taken between 10 % and 90 %
of the input, leaving out the group join at the start and the last commit.

* ``exact`` — structured candidates only (no free-text tail), offline models:
  every candidate takes the exact key join. The same run measures the
  physical ceiling (:mod:`loadtest.baseline`) on topics of its own, first,
  and reports slotwise / ceiling.
* ``cascade`` — chat observations through the fake model at 320 ms: model
  extraction, then the exact join for the schematized facts and vector fetch
  plus a slot-match call for the free-text tail.
* ``soak`` runs the same way, in ``soak.py``.
"""

from __future__ import annotations

import math
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slotwise.loadtest.baseline import measure_ceiling
from slotwise.loadtest.cost import cost_figures, extracted_answer_figures, gate_figures
from slotwise.loadtest.generator import WorkloadConfig, Write, generate
from slotwise.loadtest.measure import Latencies, latencies, overall_rate, sustained_rate
from slotwise.loadtest.producer import Publishable, publish
from slotwise.loadtest.results import Figure
from slotwise.loadtest.runner import (
    Bench,
    BenchError,
    WatermarkListener,
    WorkerProcess,
    cpu_seconds,
    metric_total,
    rss_bytes,
)
from slotwise.models.pricing import Prices, card
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.kafka.admin import delete_topics, ensure_topics
from slotwise.streams.config import Settings
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.records import Observation

__all__ = [
    "Follower",
    "Options",
    "RunResult",
    "cascade",
    "exact",
    "paced_window",
    "preload",
    "profiled",
]

_DECISIONS = ("ADD", "SUPERSEDE", "UPDATE", "NOOP", "REVIEW")
_STAGES = ("extract", "lookup", "vector_fetch", "slot_match", "apply", "commit")


@dataclass(frozen=True, slots=True)
class Options:
    """What every scenario run is told; None means the scenario's own default."""

    settings: Settings
    workdir: Path
    partitions: int = 12
    count: int | None = None
    subjects: int | None = None
    duration_s: float | None = None
    latency_ms: float = 320.0
    llm_concurrency: int = 256
    max_in_flight: int | None = None
    workers: int = 1
    baseline: bool = True
    baseline_records: int = 20_000
    seed: int = 42
    deadline_s: float = 1_800.0
    profile_dir: Path | None = None
    progress: bool = False
    run: int = 0
    prices: Prices | None = None

    def model_prices(self) -> Prices:
        """The per-token prices calls are costed at: given, or the model's list prices."""
        return self.prices or card(self.settings.llm_model).prices

    def sized(self, count: int, subjects: int) -> tuple[int, int]:
        return self.count or count, self.subjects or subjects

    def worker_env(self) -> dict[str, str]:
        """Overrides of the product defaults the worker runs with (none unless asked)."""
        if self.max_in_flight is None:
            return {}
        return {"SLOTWISE_MAX_IN_FLIGHT": str(self.max_in_flight)}


@dataclass(frozen=True, slots=True)
class RunResult:
    figures: list[Figure]
    details: dict[str, Any] = field(default_factory=dict)


SCHEMA = AttributeSchema.load()


def workload(
    options: Options, count: int, subjects: int, *, free_text_rate: float = 0.22
) -> list[Write]:
    """The generator's mix; subject ids unique to this run."""
    config = WorkloadConfig(
        subjects=subjects, count=count, seed=options.seed,
        subject_prefix=f"b{uuid.uuid4().hex[:6]}", free_text_rate=free_text_rate,
    )  # fmt: skip
    return list(generate(config, SCHEMA))


def preload(
    bench: Bench, topic: str, records: Iterable[Publishable], total: int, *, progress: bool = False
) -> None:
    report = publish(
        records,
        bench.settings.librdkafka(),
        topic,
        rate=None,
        total=total,
        track=False,
        progress=progress,
    )
    if report.delivered != total:
        raise BenchError(f"pre-load delivered {report.delivered} of {total}: {report.errors}")


class Follower:
    """Samples a progress count until it reaches a level: ``(seconds, done)`` from one clock."""

    def __init__(
        self, progress: Callable[[], int], workers: Sequence[WorkerProcess], every_s: float = 0.5
    ) -> None:
        self.samples: list[tuple[float, float]] = []
        self._progress = progress
        self._workers = workers
        self._every_s = every_s
        self._started = time.monotonic()

    def sample(self) -> tuple[float, int]:
        """Progress now, noted: ``(seconds on the follower's clock, done)``."""
        done = self._progress()
        at = time.monotonic() - self._started
        self.samples.append((at, done))
        return at, done

    def until(self, level: int, deadline_s: float) -> float:
        """Sample until ``level`` is reached; the time it was, on the follower's clock."""
        give_up = time.monotonic() + deadline_s
        while True:
            at, done = self.sample()
            if done >= level:
                return at
            for worker in self._workers:
                worker.check_alive()
            if time.monotonic() > give_up:
                tails = "\n".join(w.log_tail(20) for w in self._workers)
                raise BenchError(f"progress {done} of {level} after {deadline_s:.0f} s:\n{tails}")
            time.sleep(self._every_s)


def paced_window(
    bench: Bench, options: Options, rate: float, duration: float, worker: WorkerProcess
) -> Latencies:
    """The nominal load on a running worker for ``duration`` s: produce → applied latencies.

    For a scenario that measures the write path beside something else (a background
    job, a migration): fresh subjects each window, so windows do not share state.
    """
    count = max(1, round(rate * duration))
    writes = workload(options, count, 1_000)
    marks = WatermarkListener(options.settings.redis_url, bench.redis_prefix).start()
    try:
        report = publish(
            (w.observation() for w in writes),
            options.settings.librdkafka(),
            bench.catalogue.observations,
            rate=rate,
            total=count,
            progress=False,
        )
        subjects = sorted({w.subject_id for w in writes})
        Follower(lambda: bench.applied_observations(subjects), [worker]).until(count, 300)
    finally:
        marks.stop()
    return latencies(report.produced_at, marks.seen)


@contextmanager
def profiled(options: Options, worker: WorkerProcess, name: str) -> Iterator[Path | None]:
    """py-spy on the worker while the block runs (collapsed stacks), if a folder was given."""
    if options.profile_dir is None:
        yield None
        return
    options.profile_dir.mkdir(parents=True, exist_ok=True)
    path = options.profile_dir / f"{name}-run{options.run}.txt"
    spy = subprocess.Popen(
        ["py-spy", "record", "--pid", str(worker.pid), "--rate", "100", "--nonblocking",
         "--format", "raw", "--output", str(path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield path
    finally:
        spy.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
        try:
            spy.wait(60)
        except subprocess.TimeoutExpired:
            spy.kill()
            spy.wait(10)


class Cpu:
    """The CPU processes use together from their marks on, per record."""

    def __init__(self, start: Mapping[int, float]) -> None:
        self._start = dict(start)

    def per_record_ms(self, records: int) -> float:
        used = sum((cpu_seconds(pid) or start) - start for pid, start in self._start.items())
        return used / records * 1000 if records else math.nan


def start_workers(bench: Bench, options: Options, env: Mapping[str, str]) -> list[WorkerProcess]:
    """``options.workers`` replicas of one group, launched; they share the partitions."""
    return [bench.worker(f"w{i}", env=env) for i in range(options.workers)]


def wait_ready(
    workers: Sequence[WorkerProcess], follower: Follower, timeout_s: float = 120.0
) -> Cpu:
    """Until every replica is healthy, following the progress meanwhile; their CPU from then on.

    The first replica ready drains the backlog alone until the others are up, and a
    small backlog can be gone before the last one is: progress sampled only from
    then on would start past its end. Each replica's CPU counts from its own
    readiness, so start-up (imports, loading the models) stays out of the figure.
    """
    ready: dict[int, float] = {}
    give_up = time.monotonic() + timeout_s
    while True:
        follower.sample()
        for worker in workers:
            worker.check_alive()
            if worker.pid not in ready and worker.health() == 200:
                ready[worker.pid] = cpu_seconds(worker.pid) or 0.0
        if len(ready) == len(workers):
            return Cpu(ready)
        if time.monotonic() > give_up:
            tails = "\n".join(w.log_tail(20) for w in workers if w.pid not in ready)
            raise BenchError(f"replicas not healthy after {timeout_s:.0f} s:\n{tails}")
        time.sleep(0.2)


def summed_metrics(workers: Sequence[WorkerProcess]) -> dict[str, float]:
    """Counters and histogram sums of every replica, added up."""
    total: dict[str, float] = {}
    for worker in workers:
        for key, value in worker.metrics().items():
            total[key] = total.get(key, 0.0) + value
    return total


def stage_figures(metrics: dict[str, float]) -> list[Figure]:
    """Mean time per call of each stage the worker times (queueing for the model included)."""
    figures = []
    for stage in _STAGES:
        calls = metric_total(metrics, "slotwise_stage_seconds_count", stage=stage)
        spent = metric_total(metrics, "slotwise_stage_seconds_sum", stage=stage)
        if calls:
            figures.append(Figure(f"stage mean: {stage}", spent / calls * 1000, "ms"))
    return figures


def decision_figures(metrics: dict[str, float], total: int) -> list[Figure]:
    figures = []
    for decision in _DECISIONS:
        n = metric_total(metrics, "slotwise_decisions_total", decision=decision)
        figures.append(
            Figure(f"decisions: {decision.lower()}", n / total if total else math.nan, "per record")
        )
    return figures


# -- exact ---------------------------------------------------------------------


def exact(options: Options) -> RunResult:
    count, subjects = options.sized(30_000, 1_000)
    writes = workload(options, count, subjects, free_text_rate=0.0)
    ceiling = _ceiling(options) if options.baseline else {}
    with Bench(options.settings, options.workdir, options.partitions) as bench:
        topic = bench.catalogue.candidates
        preload(bench, topic, (w.candidate() for w in writes), count, progress=options.progress)
        workers = start_workers(bench, options, options.worker_env())
        follower = Follower(lambda: bench.committed_count(topic), workers)
        cpu = wait_ready(workers, follower)
        with profiled(options, workers[0], "exact"):
            follower.until(count, options.deadline_s)
        worker_ms = cpu.per_record_ms(count)
        metrics = summed_metrics(workers)
        rss = max(rss_bytes(w.pid) or 0 for w in workers)
    sustained = sustained_rate(follower.samples, count)
    figures = [
        Figure("candidates", count, "records"),
        Figure("subjects", subjects, "subjects"),
        Figure("workers", options.workers, "processes"),
        Figure("sustained throughput", sustained, "candidates/s"),
        Figure("overall throughput", overall_rate(follower.samples, count), "candidates/s"),
        Figure("worker CPU per candidate", worker_ms, "ms"),
    ]
    for mode, rate in ceiling.items():
        figures += [
            Figure(f"baseline ({mode})", rate, "records/s"),
            Figure(f"slotwise / baseline ({mode})", sustained / rate, "ratio"),
        ]
    figures += [
        *stage_figures(metrics),
        *decision_figures(metrics, count),
        Figure("worker RSS at end (largest)", rss / 2**20, "MB"),
    ]
    return RunResult(figures, {"progress": follower.samples})


def _ceiling(options: Options) -> dict[str, float]:
    """The physical ceiling, measured now on topics of its own."""
    settings = options.settings
    catalogue = Catalogue(
        prefix=f"bench-{uuid.uuid4().hex[:8]}-baseline", partitions=options.partitions
    )
    ensure_topics(settings.librdkafka(), catalogue, settings.replication_factor)
    try:
        ceilings = measure_ceiling(
            settings.librdkafka(),
            settings.redis_url,
            catalogue,
            records=options.baseline_records,
            runs=1,
        )
    finally:
        delete_topics(settings.librdkafka(), [spec.name for spec in catalogue.specs()])
    return {mode: ceiling.rate for mode, ceiling in ceilings.items()}


# -- cascade -------------------------------------------------------------------


def cascade(options: Options) -> RunResult:
    count, subjects = options.sized(6_000, 1_000)
    writes = workload(options, count, subjects)
    return through_the_model(options, "cascade", [w.observation() for w in writes], count, subjects)


def through_the_model(
    options: Options, name: str, turns: Sequence[Observation], count: int, subjects: int
) -> RunResult:
    """``turns`` through workers and the fake model: throughput, CPU, calls, tokens, cost."""
    order: dict[str, list[str]] = {}
    for turn in turns:
        order.setdefault(turn.subject_id, []).append(turn.observation_id)
    with Bench(options.settings, options.workdir, options.partitions) as bench:
        model = bench.fake_model(options.latency_ms, "slotwise.loadtest.responders:bench")
        topic = bench.catalogue.observations
        preload(bench, topic, turns, count, progress=options.progress)
        env = {**options.worker_env(), **bench.model_env(model, options.llm_concurrency)}
        workers = start_workers(bench, options, env)
        # Every turn ends in its watermark, fact or none, once its candidates are applied.
        follower = Follower(lambda: bench.watermarked(order), workers)
        cpu = wait_ready(workers, follower)
        with profiled(options, workers[0], name):
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
            *extracted_answer_figures(metrics, count),
            *stage_figures(metrics),
            *decision_figures(metrics, count),
        ],
        {"progress": follower.samples},
    )


def llm_figures(metrics: dict[str, float], observations: int) -> list[Figure]:
    """Model calls (and HTTP attempts) per observation, by purpose."""
    figures = []
    for purpose in ("extract", "slot_match"):
        calls = metric_total(metrics, "slotwise_llm_calls_total", purpose=purpose)
        attempts = metric_total(metrics, "slotwise_llm_request_seconds_count", purpose=purpose)
        figures += [
            Figure(f"LLM calls per observation: {purpose}", calls / observations, "calls"),
            Figure(f"LLM attempts per observation: {purpose}", attempts / observations, "requests"),
        ]
        if attempts:
            # One HTTP attempt as the worker saw it: the model's latency plus everything
            # between the SDK call and the reply (the fake model's queue, the event loop).
            spent = metric_total(metrics, "slotwise_llm_request_seconds_sum", purpose=purpose)
            figures.append(Figure(f"LLM request mean: {purpose}", spent / attempts * 1000, "ms"))
    total = metric_total(metrics, "slotwise_llm_calls_total")
    figures.append(Figure("LLM calls per observation", total / observations, "calls"))
    return figures
