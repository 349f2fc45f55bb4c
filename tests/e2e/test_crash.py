"""Crash-equivalence: kill -9 the worker at random moments; the end state equals a clean run's."""

from __future__ import annotations

import os
import random
import time
from collections import Counter

import pytest

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact
from tests.e2e.conftest import PipelineFactory
from tests.e2e.harness import (
    assert_same_state,
    committed_values,
    latest_facts,
    milvus_rows,
    redis_state,
)

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

    assert_same_state(redis_state(crashed), redis_state(clean), ("crashed", "clean"))
    assert milvus_rows(crashed) == milvus_rows(clean)
    clean_events = committed_values(clean, clean.catalogue.supersessions)
    crashed_events = committed_values(crashed, crashed.catalogue.supersessions)
    assert sorted(crashed_events) == sorted(clean_events)
    assert max(Counter(crashed_events).values(), default=1) == 1, "an event was seen twice"
    assert len(clean_events) > CANDIDATES // 50, "the workload made too few supersessions"
    assert latest_facts(crashed) == latest_facts(clean)
    assert committed_values(crashed, crashed.catalogue.deadletter) == []
