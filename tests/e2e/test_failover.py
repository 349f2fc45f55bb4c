"""kill -9 of the Redis primary under a running worker: Sentinel fails over, nothing is lost.

A primary, two replicas and three Sentinels are started here; the worker reaches
them through Sentinel (``SLOTWISE_REDIS_SENTINELS``) with
``SLOTWISE_REDIS_MIN_REPLICAS=1``, so every committed event's writes are on a
replica when the primary dies. After the failover every candidate is applied
once, no supersession id is published twice, and the state (Redis, Milvus, the
facts topic, the events) equals an uninterrupted run's on the stack's Redis.
In the second case the replicas stop reading the primary before it dies, so the
promoted one lacks writes the primary acknowledged (never committed) and whose
vector rows Milvus already holds. ``SLOTWISE_FAILOVER_CANDIDATES`` sizes the run.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.config import Settings
from slotwise.streams.dev.replicated_redis import ReplicatedRedis
from slotwise.streams.dev.testing import WorkerProcess, metric_total
from slotwise.topics.records import CandidateFact
from tests.e2e.conftest import PipelineFactory
from tests.e2e.harness import (
    assert_exactly_once,
    assert_same_state,
    committed_values,
    latest_facts,
    milvus_rows,
    redis_state,
)

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus, pytest.mark.slow]

CANDIDATES = int(os.environ.get("SLOTWISE_FAILOVER_CANDIDATES", "2000"))
# The WAIT marker exists only where replicas are waited for.
MARKER = (":replica-ack",)


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[ReplicatedRedis]:
    # Requested before the pipelines: it outlives their teardown.
    with ReplicatedRedis(tmp_path / "redis", replicas=2, sentinels=3) as started:
        yield started


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("replicas", ["keeping up", "behind"])
def test_kill_minus_nine_of_the_primary_loses_no_write(
    replicas: str, nodes: ReplicatedRedis, pipeline_factory: PipelineFactory, stack: Settings
) -> None:
    config = WorkloadConfig(
        subjects=60, count=CANDIDATES, seed=29, contradiction_rate=0.2,
        subject_prefix=f"fo{uuid.uuid4().hex[:6]}",
    )  # fmt: skip
    candidates: list[CandidateFact] = [
        w.candidate() for w in generate(config, AttributeSchema.load())
    ]
    base_timestamp_ms = int(time.time() * 1000)
    clean, failed = pipeline_factory(), pipeline_factory()
    failed.settings = stack.model_copy(
        update={
            "redis_url": nodes.primary.url,  # its db; the address comes from the Sentinels
            "redis_sentinels": nodes.sentinel_addresses,
            "redis_min_replicas": 1,
            "redis_wait_timeout_ms": 500,
        }
    )

    clean.worker().wait_healthy()
    ends = clean.publish(
        clean.catalogue.candidates, candidates, base_timestamp_ms=base_timestamp_ms
    )
    clean.wait_committed(clean.catalogue.candidates, ends, timeout=900)

    worker = failed.worker()
    worker.wait_healthy()
    assert (
        failed.publish(failed.catalogue.candidates, candidates, base_timestamp_ms=base_timestamp_ms)
        == ends
    )
    failed.wait_some_committed(CANDIDATES // 10)  # most of the run still to apply
    if replicas == "behind":
        # The primary goes on applying what no replica receives, and the vector rows of
        # those events reach Milvus before a commit's WAIT finds no replica: the
        # promoted replica lacks writes the index holds rows of.
        for replica in nodes.replicas:
            replica.pause()
        _wait_for_a_commit_held(worker)
    nodes.primary.kill()
    for replica in nodes.replicas:
        replica.resume()
    nodes.wait_failover()
    failed.wait_committed(failed.catalogue.candidates, ends, timeout=900)
    samples = worker.metrics()
    assert metric_total(samples, "slotwise_redis_failovers_total") >= 1
    if replicas == "keeping up":
        # Behind, the held commits can have paused the intake (backpressure): no write
        # need be in flight at the kill. The rewind and the heal show the replay.
        assert metric_total(samples, "slotwise_retries_total") >= 1, "no write was in flight"
    # Events applied to the old primary and not yet committed were replayed, not committed.
    assert metric_total(samples, "slotwise_store_rewinds_total") >= 1
    assert worker.alive(), "the worker followed the failover without a restart"

    # The primary now (on a loaded machine the Sentinels may have failed over again).
    primary = nodes.wait_failover()
    failed.settings = failed.settings.model_copy(
        update={"redis_url": primary.url, "redis_sentinels": None}
    )
    assert_exactly_once(failed, candidates)
    assert_same_state(
        redis_state(failed, ignore=MARKER), redis_state(clean), ("failed over", "clean")
    )
    assert milvus_rows(failed) == milvus_rows(clean)
    events = committed_values(failed, failed.catalogue.supersessions)
    assert max(Counter(events).values()) == 1, "an event was published twice"
    assert sorted(events) == sorted(committed_values(clean, clean.catalogue.supersessions))
    assert latest_facts(failed) == latest_facts(clean)
    if replicas == "behind":
        # The events applied to the old primary alone were decided again on the new one.
        assert metric_total(samples, "slotwise_index_heals_total") >= 1


def _wait_for_a_commit_held(worker: WorkerProcess, timeout: float = 60.0) -> None:
    """Until a commit's WAIT found no replica: events applied since are on the primary only."""
    deadline = time.monotonic() + timeout
    while (
        metric_total(worker.metrics(), "slotwise_redis_replica_waits_total", outcome="behind") < 1
    ):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no commit waited for the paused replicas in {timeout:.0f} s")
        time.sleep(0.1)
