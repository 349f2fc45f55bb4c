"""A worker with ``SLOTWISE_REDIS_MIN_REPLICAS=1`` commits only what a replica holds.

Its Redis is a primary + replica started here; the replica is frozen (SIGSTOP) in
the middle of a run: the worker keeps applying to the primary, but commits
nothing (no offsets, no outputs) until the replica has the writes, and then
commits each event once.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.config import Settings
from slotwise.streams.dev.replicated_redis import ReplicatedRedis
from slotwise.streams.dev.testing import metric_total
from slotwise.topics.records import CandidateFact
from tests.e2e.conftest import TEST_PARTITIONS, PipelineFactory
from tests.e2e.harness import assert_exactly_once, store_call

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[ReplicatedRedis]:
    # Requested before the pipeline, so it outlives the pipeline's teardown (which
    # deletes the pipeline's keys from this Redis).
    with ReplicatedRedis(tmp_path / "redis", replicas=1) as nodes:
        yield nodes


def test_a_lagging_replica_holds_the_commits_and_loses_nothing(
    pair: ReplicatedRedis, pipeline_factory: PipelineFactory, stack: Settings
) -> None:
    pipeline = pipeline_factory()
    pipeline.settings = stack.model_copy(
        update={
            "redis_url": pair.primary.url,
            "redis_min_replicas": 1,
            "redis_wait_timeout_ms": 200,
        }
    )
    config = WorkloadConfig(
        subjects=6, count=120, seed=17, contradiction_rate=0.4, subject_prefix=uuid.uuid4().hex[:6]
    )
    candidates: list[CandidateFact] = [
        w.candidate() for w in generate(config, AttributeSchema.load())
    ]
    first, second = candidates[:60], candidates[60:]
    topic = pipeline.catalogue.candidates
    worker = pipeline.worker()
    worker.wait_healthy()
    ends = pipeline.publish(topic, first)
    pipeline.wait_committed(topic, ends)

    pair.replicas[0].pause()
    try:
        more = pipeline.publish(topic, second)
        deadline = time.monotonic() + 30
        last = second[-1]
        while store_call(pipeline, "applied", last.subject_id, last.candidate_id) is None:
            assert time.monotonic() < deadline, worker.log_tail()
            time.sleep(0.2)
        time.sleep(1.0)  # five WAIT timeouts
        # A partition no subject hashed to has no committed offset (-1001) at all.
        held = {p: max(o, 0) for p, o in pipeline.committed(topic).items()}
        assert all(held.get(p, 0) == ends.get(p, 0) for p in range(TEST_PARTITIONS)), held
        behind = metric_total(
            worker.metrics(), "slotwise_redis_replica_waits_total", outcome="behind"
        )
        assert behind >= 1
    finally:
        pair.replicas[0].resume()
    pipeline.wait_committed(topic, {p: max(ends.get(p, 0), more.get(p, 0)) for p in more})
    assert_exactly_once(pipeline, candidates)
    acked = metric_total(worker.metrics(), "slotwise_redis_replica_waits_total", outcome="acked")
    assert acked >= 2
