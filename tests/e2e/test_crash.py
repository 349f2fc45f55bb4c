"""Crash-equivalence: kill -9 the worker at random moments; the end state equals a clean run's."""

from __future__ import annotations

import os
import random
import time
from collections import Counter

import pytest
import redis
from pymilvus import MilvusClient

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.milvus_index import GRPC_OPTIONS
from slotwise.topics.records import CandidateFact
from tests.e2e.conftest import PipelineFactory
from tests.e2e.harness import Pipeline

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus, pytest.mark.slow]

CANDIDATES = int(os.environ.get("SLOTWISE_CRASH_CANDIDATES", "20000"))
SUBJECTS = 300
KILLS = 6


@pytest.mark.timeout(3600)
def test_kill_minus_nine_at_random_moments_changes_nothing(
    pipeline_factory: PipelineFactory,
) -> None:
    config = WorkloadConfig(subjects=SUBJECTS, count=CANDIDATES, seed=11, contradiction_rate=0.2)
    candidates: list[CandidateFact] = [
        w.candidate() for w in generate(config, AttributeSchema.load())
    ]
    clean, crashed = pipeline_factory(), pipeline_factory()
    # Both runs read the same record timestamps (the write path's clock); recent ones,
    # or the topics' retention would delete the input under the test.
    base_timestamp_ms = int(time.time() * 1000)

    clean.worker().wait_healthy()
    ends = clean.publish(
        clean.catalogue.candidates, candidates, base_timestamp_ms=base_timestamp_ms
    )
    clean.wait_committed(clean.catalogue.candidates, ends, timeout=1800)

    crashed_ends = crashed.publish(
        crashed.catalogue.candidates, candidates, base_timestamp_ms=base_timestamp_ms
    )
    assert crashed_ends == ends
    rng = random.Random(5)
    kills = 0
    worker = crashed.worker("victim")
    while kills < KILLS:
        # Some kills land during start-up, most while events are in flight.
        time.sleep(rng.uniform(2.0, 12.0))
        worker.kill()
        kills += 1
        worker = crashed.worker("victim")  # same instance: it fences its own open transaction
    crashed.wait_committed(crashed.catalogue.candidates, ends, timeout=1800)

    assert _redis_state(crashed) == _redis_state(clean)
    assert _milvus_rows(crashed) == _milvus_rows(clean)
    clean_events = _values(clean, clean.catalogue.supersessions)
    crashed_events = _values(crashed, crashed.catalogue.supersessions)
    assert sorted(crashed_events) == sorted(clean_events)
    assert max(Counter(crashed_events).values(), default=1) == 1, "an event was seen twice"
    assert len(clean_events) > CANDIDATES // 50, "the workload made too few supersessions"
    assert _latest_facts(crashed) == _latest_facts(clean)
    assert _values(crashed, crashed.catalogue.deadletter) == []


def _redis_state(pipeline: Pipeline) -> dict[str, object]:
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    state: dict[str, object] = {}
    try:
        for key in client.scan_iter(match=f"{pipeline.redis_prefix}:*", count=1000):
            name = key.decode().removeprefix(pipeline.redis_prefix)
            kind = client.type(key)
            if kind == b"hash":
                state[name] = client.hgetall(key)
            elif kind == b"zset":
                state[name] = client.zrange(key, 0, -1, withscores=True)
            elif kind == b"string":
                state[name] = client.get(key)
            elif kind == b"set":
                state[name] = client.smembers(key)
            else:
                state[name] = kind
    finally:
        client.close()
    assert state, "nothing in Redis"
    return state


def _milvus_rows(pipeline: Pipeline) -> dict[str, tuple[object, ...]]:
    client = MilvusClient(uri=pipeline.settings.milvus_uri, grpc_options=GRPC_OPTIONS)
    rows: dict[str, tuple[object, ...]] = {}
    try:
        fields = ["fact_id", "subject_id", "text", "embedding_model", "category"]
        subjects = {k.decode().split("{")[1].split("}")[0] for k in _redis_keys(pipeline)}
        for subject in sorted(subjects):
            for row in client.query(
                pipeline.milvus_alias,
                filter=f'subject_id == "{subject}"',
                output_fields=fields,
                limit=16384,
            ):
                rows[row["fact_id"]] = tuple(row[f] for f in fields[1:])
    finally:
        client.close()
    assert rows, "nothing in Milvus"
    return rows


def _redis_keys(pipeline: Pipeline) -> list[bytes]:
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    try:
        return list(client.scan_iter(match=f"{pipeline.redis_prefix}:*:meta", count=1000))
    finally:
        client.close()


def _values(pipeline: Pipeline, topic: str) -> list[bytes]:
    return [v or b"" for _, v, _ in pipeline.read_committed(topic, idle_s=3.0)]


def _latest_facts(pipeline: Pipeline) -> dict[bytes | None, bytes | None]:
    latest: dict[bytes | None, bytes | None] = {}
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.facts, idle_s=3.0):
        latest[key] = value
    return latest
