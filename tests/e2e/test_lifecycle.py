"""Graceful shutdown and rebalancing: nothing lost, nothing applied or published twice."""

from __future__ import annotations

import time

import pytest

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact
from tests.e2e.harness import Pipeline, assert_exactly_once

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus, pytest.mark.slow]

SHUTDOWN_BOUND_S = 45.0  # the worker's drain timeout (30 s) plus closing


def _workload(count: int, seed: int) -> list[CandidateFact]:
    config = WorkloadConfig(subjects=60, count=count, seed=seed, contradiction_rate=0.2)
    return [w.candidate() for w in generate(config, AttributeSchema.load())]


def test_sigterm_drains_commits_and_exits_within_its_bound(pipeline: Pipeline) -> None:
    candidates = _workload(3000, seed=3)
    worker = pipeline.worker("graceful")
    worker.wait_healthy()
    ends = pipeline.publish(pipeline.catalogue.candidates, candidates)
    pipeline.wait_some_committed(300)

    started = time.monotonic()
    assert worker.terminate(timeout=SHUTDOWN_BOUND_S) == 0, worker.log_tail()
    assert time.monotonic() - started < SHUTDOWN_BOUND_S
    stopped_at = pipeline.committed(pipeline.catalogue.candidates)
    assert sum(stopped_at.values()) > 0

    pipeline.worker("graceful").wait_healthy()  # the same replica comes back
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout=300)
    assert_exactly_once(pipeline, candidates)


def test_a_second_worker_joins_mid_run_without_duplicates_or_loss(pipeline: Pipeline) -> None:
    candidates = _workload(4000, seed=4)
    # The run's last quarter is published once the second worker owns candidates: a
    # first worker fast enough to finish its three quarters while the second starts
    # would otherwise leave the newcomer nothing to take over.
    before_join, after_join = candidates[:3000], candidates[3000:]
    first = pipeline.worker("first")
    first.wait_healthy()
    ends = pipeline.publish(pipeline.catalogue.candidates, before_join)
    pipeline.wait_some_committed(300)
    second = pipeline.worker("second")
    second.wait_healthy()
    pipeline.wait_owns("second", pipeline.catalogue.candidates)
    ends |= pipeline.publish(pipeline.catalogue.candidates, after_join)
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout=300)

    assert_exactly_once(pipeline, candidates)
    for worker in (first, second):
        assert worker.events_in() > 0, f"{worker.instance} never got a partition"
