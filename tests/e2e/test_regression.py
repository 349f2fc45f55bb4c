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
from confluent_kafka import Consumer, TopicPartition

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.config import Settings
from slotwise.streams.dev.replicated_redis import ReplicatedRedis
from slotwise.streams.dev.testing import metric_total
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
    store_call,
)

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus, pytest.mark.slow]

CANDIDATES = int(os.environ.get("SLOTWISE_REGRESSION_CANDIDATES", "2000"))


def committed_count(pipeline: Pipeline) -> int:
    return sum(max(0, o) for o in pipeline.committed(pipeline.catalogue.candidates).values())


def store_marks(pipeline: Pipeline) -> dict[int, int]:
    """The candidates offsets the store's commit marks say it holds, per partition
    (``sinks/redis/commits.py``): recorded after the applies of every event below."""
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    try:
        marks = client.hgetall(f"{pipeline.redis_prefix}:commits:{pipeline.group_id}")
    finally:
        client.close()
    topic = pipeline.catalogue.candidates
    return {
        int(field.decode().rpartition(":")[2]): int(offset)
        for field, offset in marks.items()
        if field.decode().rpartition(":")[0] == topic
    }


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
    # Healed when the store's marks reach the end of the log: the group's commits may
    # have got there first (all committed before the crash, the replay only re-applies),
    # and a count of applies can pass the commits of the crash while lost ones still wait.
    while any(store_marks(crashed).get(p, -1) < end for p, end in ends.items()):
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
    # the store first (streams/runtime/index_heal.py).
    healed, whole = redis_state(crashed), redis_state(clean)
    assert_same_state(healed, whole, ("healed", "clean"))
    assert milvus_rows(crashed) == milvus_rows(clean)
    events = committed_values(crashed, crashed.catalogue.supersessions)
    assert max(Counter(events).values()) == 1, "an event was published twice"
    assert sorted(events) == sorted(committed_values(clean, clean.catalogue.supersessions))
    assert latest_facts(crashed) == latest_facts(clean)


@pytest.mark.timeout(900)
def test_a_partition_whose_first_mark_the_store_lost_is_replayed_from_its_start(
    pipeline_factory: PipelineFactory,
) -> None:
    """A store can come back holding the marks of some partitions and not another's: the
    one whose first commit fell inside the lost second. Its events are not new to the
    store (they were committed against it), so they are replayed from the log's start."""
    pipeline = pipeline_factory()
    config = WorkloadConfig(
        subjects=30, count=CANDIDATES // 4, seed=37, contradiction_rate=0.2,
        subject_prefix=f"rm{uuid.uuid4().hex[:6]}",
    )  # fmt: skip
    candidates: list[CandidateFact] = [
        w.candidate() for w in generate(config, AttributeSchema.load())
    ]
    topic = pipeline.catalogue.candidates
    pipeline.worker().wait_healthy()
    ends = pipeline.publish(topic, candidates, base_timestamp_ms=int(time.time() * 1000))
    pipeline.wait_committed(topic, ends, timeout=600)
    pipeline.stop_all()
    whole, rows = redis_state(pipeline), milvus_rows(pipeline)

    # The store as if partition 0's first commit had been lost: none of its subjects'
    # writes, no mark for it; the other partitions' marks and subjects kept.
    lost = subjects_in(pipeline, topic, 0)
    assert lost and lost != {c.subject_id for c in candidates}
    for subject in lost:
        store_call(pipeline, "erase_subject", subject)
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    try:
        marks = f"{pipeline.redis_prefix}:commits:{pipeline.group_id}"
        assert client.hdel(marks, f"{topic}:0") == 1
    finally:
        client.close()

    worker = pipeline.worker()
    worker.wait_healthy()
    deadline = time.monotonic() + 300
    while any(store_marks(pipeline).get(p, -1) < end for p, end in ends.items()):
        assert time.monotonic() < deadline, worker.log_tail()
        time.sleep(0.1)
    replayed = metric_total(worker.metrics(), "slotwise_store_regression_replayed_total")
    pipeline.stop_all()

    assert replayed == ends[0], "partition 0 was not replayed from its start"
    assert_exactly_once(pipeline, candidates)
    assert_same_state(redis_state(pipeline), whole, ("replayed", "whole"))
    assert milvus_rows(pipeline) == rows
    events = committed_values(pipeline, pipeline.catalogue.supersessions)
    assert max(Counter(events).values()) == 1, "an event was published twice"


def subjects_in(pipeline: Pipeline, topic: str, partition: int) -> set[str]:
    """The subjects whose records the partition holds (keys are subject ids)."""
    consumer = Consumer(
        pipeline.settings.librdkafka(
            {"group.id": f"r-{uuid.uuid4().hex}", "enable.auto.commit": False}
        )
    )
    try:
        _, end = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
        consumer.assign([TopicPartition(topic, partition, 0)])
        found: set[str] = set()
        deadline = time.monotonic() + 60
        position = 0
        while position < end:
            assert time.monotonic() < deadline, f"read {position} of {end}"
            message = consumer.poll(0.2)
            if message is None or message.error() is not None:
                continue
            found.add((message.key() or b"").decode())
            position = message.offset() + 1
        return found
    finally:
        consumer.close()
