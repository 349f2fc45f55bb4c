"""A Redis that comes back missing its last second of writes is healed by the worker.

A simulated crash of Redis (AOF, fsync always, started here) while writes flow:
it is killed -9 and its AOF cut back to where it was one second earlier, so the
store lacks events whose Kafka transaction was committed. Either the worker
dies with it (a node crash) and both start again, and the worker finds its
partitions' commit marks below the committed offsets when it is assigned them;
or only Redis crashes, under a worker held still meanwhile (so the loss is
measured before it can heal), and the worker sees a new Redis server at its next
commit. With no other step the worker replays from the marks, and the end state
equals an uninterrupted run's, every event published once.
``SLOTWISE_REGRESSION_CANDIDATES`` sizes the run.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.replicated_redis import ReplicatedRedis
from slotwise.streams.settings import Settings
from slotwise.streams.testing import metric_total
from slotwise.topics.records import CandidateFact
from tests.e2e.conftest import PipelineFactory
from tests.e2e.harness import (
    Pipeline,
    assert_exactly_once,
    assert_same_state,
    committed_values,
    latest_facts,
    milvus_rows,
    redis_state,
)

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus, pytest.mark.slow]

CANDIDATES = int(os.environ.get("SLOTWISE_REGRESSION_CANDIDATES", "2000"))


def committed_count(pipeline: Pipeline) -> int:
    return sum(max(0, o) for o in pipeline.committed(pipeline.catalogue.candidates).values())


def applied_count(pipeline: Pipeline) -> int:
    """Events the pipeline's store holds as applied (its Redis as the worker reaches it)."""
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    try:
        keys = list(client.scan_iter(match=f"{pipeline.redis_prefix}:*:applied", count=1000))
        return sum(int(client.hlen(k)) for k in keys)
    finally:
        client.close()


@pytest.fixture
def node(tmp_path: Path) -> Iterator[ReplicatedRedis]:
    with ReplicatedRedis(tmp_path / "redis", replicas=0, appendfsync="always") as started:
        yield started


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("crash", ["node", "redis"])
def test_a_store_restarted_one_second_behind_is_healed(
    crash: str, node: ReplicatedRedis, pipeline_factory: PipelineFactory, stack: Settings
) -> None:
    config = WorkloadConfig(
        subjects=60, count=CANDIDATES, seed=31, contradiction_rate=0.2,
        subject_prefix=f"rg{uuid.uuid4().hex[:6]}",
    )  # fmt: skip
    candidates: list[CandidateFact] = [
        w.candidate() for w in generate(config, AttributeSchema.load())
    ]
    base_timestamp_ms = int(time.time() * 1000)
    clean, crashed = pipeline_factory(), pipeline_factory()
    crashed.settings = stack.model_copy(update={"redis_url": node.primary.url})

    clean.worker().wait_healthy()
    topic = clean.catalogue.candidates
    ends = clean.publish(topic, candidates, base_timestamp_ms=base_timestamp_ms)
    clean.wait_committed(topic, ends, timeout=900)

    worker = crashed.worker("node")
    worker.wait_healthy()
    assert (
        crashed.publish(
            crashed.catalogue.candidates, candidates, base_timestamp_ms=base_timestamp_ms
        )
        == ends
    )
    crashed.wait_some_committed(CANDIDATES // 10)
    aof = node.primary.aof_tail()
    cut_at = aof.stat().st_size
    applied_then = applied_count(crashed)
    # At least a second of writes go with the crash, and among them the applies of
    # events already committed: more are committed than had been applied at the cut.
    time.sleep(1.0)
    deadline = time.monotonic() + 60
    while committed_count(crashed) <= applied_then:
        assert time.monotonic() < deadline, worker.log_tail()
        time.sleep(0.05)
    if crash == "node":
        worker.kill()
    else:
        worker.pause()
    node.primary.kill()
    with aof.open("r+b") as tail:
        tail.truncate(cut_at)

    node.primary.start()
    node.primary.wait_ready()
    committed_at_crash = committed_count(crashed)
    assert applied_count(crashed) < committed_at_crash, "the store did not lose commits"
    restarted = time.monotonic()
    if crash == "node":
        worker = crashed.worker("node")
    else:
        worker.resume()
    while applied_count(crashed) < committed_at_crash:  # healed: it holds what was committed
        assert time.monotonic() - restarted < 300, worker.log_tail()
        time.sleep(0.1)
    print(f"healed in {time.monotonic() - restarted:.1f} s from the worker's (re)start")
    crashed.wait_committed(crashed.catalogue.candidates, ends, timeout=900)
    samples = worker.metrics()
    replayed = metric_total(samples, "slotwise_store_regression_replayed_total")
    healed = metric_total(samples, "slotwise_index_heals_total")

    assert_same_end(crashed, clean, candidates)
    assert replayed >= 1, "the worker did not say it replayed"
    assert healed >= 1, "no subject's vector rows were checked before its replay"
    assert worker.alive()


def assert_same_end(crashed: Pipeline, clean: Pipeline, candidates: list[CandidateFact]) -> None:
    assert_exactly_once(crashed, candidates)
    # Every key equal, the stored outputs too: a lost free-text event decided again
    # sees the vector rows its first run saw, the index being put back in line with
    # the store first (streams/index_heal.py).
    healed, whole = redis_state(crashed), redis_state(clean)
    assert_same_state(healed, whole, ("healed", "clean"))
    assert milvus_rows(crashed) == milvus_rows(clean)
    events = committed_values(crashed, crashed.catalogue.supersessions)
    assert max(Counter(events).values()) == 1, "an event was published twice"
    assert sorted(events) == sorted(committed_values(clean, clean.catalogue.supersessions))
    assert latest_facts(crashed) == latest_facts(clean)
