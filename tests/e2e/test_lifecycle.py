"""Graceful shutdown and rebalancing: nothing lost, nothing applied or published twice."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from loadtest.generator import WorkloadConfig, generate
from processors.schema import AttributeSchema
from tests.e2e.harness import Pipeline, store_call
from topics.codec import decode_record
from topics.records import CandidateFact, SupersessionEvent

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus, pytest.mark.slow]

SHUTDOWN_BOUND_S = 45.0  # the worker's drain timeout (30 s) plus closing


def _workload(count: int, seed: int) -> list[CandidateFact]:
    config = WorkloadConfig(subjects=60, count=count, seed=seed, contradiction_rate=0.2)
    return [w.candidate() for w in generate(config, AttributeSchema.load())]


def _wait_some_committed(pipeline: Pipeline, minimum: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while (
        sum(max(0, o) for o in pipeline.committed(pipeline.catalogue.candidates).values()) < minimum
    ):
        assert time.monotonic() < deadline, "the worker committed nothing"
        time.sleep(0.2)


def _assert_exactly_once(pipeline: Pipeline, candidates: list[CandidateFact]) -> None:
    for candidate in candidates:
        stored = store_call(pipeline, "applied", candidate.subject_id, candidate.candidate_id)
        assert stored is not None, f"candidate {candidate.candidate_id} was lost"
    events = [
        decode_record(v, expect=(SupersessionEvent,))
        for _, v, _ in pipeline.read_committed(pipeline.catalogue.supersessions)
    ]
    ids = Counter(e.event_id for e in events if isinstance(e, SupersessionEvent))
    assert ids and max(ids.values()) == 1, "a supersession event was published twice"
    facts_topic: dict[bytes | None, bytes | None] = {}
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.facts):
        facts_topic[key] = value
    for subject in {c.subject_id for c in candidates}:
        for fact in store_call(pipeline, "facts", subject, include_history=True):  # type: ignore[union-attr]
            published = decode_record(facts_topic[fact.fact_id.encode()])
            assert published == fact, "the facts topic disagrees with Redis"


def test_sigterm_drains_commits_and_exits_within_its_bound(pipeline: Pipeline) -> None:
    candidates = _workload(3000, seed=3)
    worker = pipeline.worker("graceful")
    worker.wait_healthy()
    ends = pipeline.publish(pipeline.catalogue.candidates, candidates)
    _wait_some_committed(pipeline, 300)

    started = time.monotonic()
    assert worker.terminate(timeout=SHUTDOWN_BOUND_S) == 0, worker.log_tail()
    assert time.monotonic() - started < SHUTDOWN_BOUND_S
    stopped_at = pipeline.committed(pipeline.catalogue.candidates)
    assert sum(stopped_at.values()) > 0

    pipeline.worker("graceful").wait_healthy()  # the same replica comes back
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout=300)
    _assert_exactly_once(pipeline, candidates)


def test_a_second_worker_joins_mid_run_without_duplicates_or_loss(pipeline: Pipeline) -> None:
    candidates = _workload(4000, seed=4)
    first = pipeline.worker("first")
    first.wait_healthy()
    ends = pipeline.publish(pipeline.catalogue.candidates, candidates)
    _wait_some_committed(pipeline, 300)
    second = pipeline.worker("second")
    second.wait_healthy()
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout=300)

    _assert_exactly_once(pipeline, candidates)
    for worker in (first, second):
        assert worker.events_in() > 0, f"{worker.instance} never got a partition"
