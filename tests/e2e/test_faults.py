"""Service faults mid-run: a broker restart, a Redis restart (AOF on), Milvus gone for a while.

Each fault hits a private instance of that one service (its own port and data
dir), so the shared stack that other tests use is never disturbed. The worker
must back off, report unhealthy while it waits, resume, and end with every
candidate applied once and every event published once. The broker is also held
down past the transaction timeout: the broker aborts the transaction left open,
and librdkafka's offset commit made while the broker is away can block for good
(sinks/kafka/publisher.py).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.sinks.kafka.publisher import TRANSACTION_TIMEOUT_MS
from slotwise.streams.config import Settings
from slotwise.streams.dev.stack import Stack
from slotwise.topics.catalogue import Catalogue
from tests.e2e.conftest import TEST_PARTITIONS
from tests.e2e.harness import Pipeline, assert_exactly_once, service_port

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus, pytest.mark.slow]


def _private(stack: Settings, service: str) -> Settings:
    """The shared stack's settings with one service moved to a private port."""
    if service == "kafka":
        port = service_port(span=2)  # the controller listens on port + 1
        return stack.model_copy(update={"kafka_bootstrap": f"127.0.0.1:{port}"})
    if service == "redis":
        return stack.model_copy(update={"redis_url": f"redis://127.0.0.1:{service_port()}/0"})
    return stack.model_copy(update={"milvus_uri": f"http://127.0.0.1:{service_port()}"})


# Past the transaction timeout and the broker's next check for timed-out transactions.
_PAST_TRANSACTION_TIMEOUT_S = TRANSACTION_TIMEOUT_MS / 1000 + 15

# (service, how long it stays down after the worker reported it): a restart, or longer.
_FAULTS = {
    "kafka": ("kafka", 0.0),
    "kafka-past-transaction-timeout": ("kafka", _PAST_TRANSACTION_TIMEOUT_S),
    "redis": ("redis", 0.0),
    "milvus": ("milvus", 0.0),
}


@pytest.fixture(params=list(_FAULTS.values()), ids=list(_FAULTS))
def faulty(
    request: pytest.FixtureRequest, stack: Settings, tmp_path: Path
) -> Iterator[tuple[str, float, Stack, Pipeline]]:
    service, down_s = request.param
    settings = _private(stack, service)
    private = Stack(settings, tmp_path / "stack")  # starts only the private service
    private.up()
    catalogue = Catalogue(prefix=f"t{uuid.uuid4().hex[:8]}", partitions=TEST_PARTITIONS)
    ensure_topics(settings.kafka_bootstrap, catalogue)
    pipeline = Pipeline(settings, catalogue, tmp_path)
    try:
        yield service, down_s, private, pipeline
    finally:
        pipeline.stop_all()
        private.up()
        pipeline.drop()
        private.down()


def test_the_worker_waits_out_an_outage_and_resumes_without_loss(
    faulty: tuple[str, float, Stack, Pipeline],
) -> None:
    service, down_s, private, pipeline = faulty
    config = WorkloadConfig(subjects=40, count=1500, seed=21, contradiction_rate=0.2)
    candidates = [w.candidate() for w in generate(config, AttributeSchema.load())]
    worker = pipeline.worker("steadfast")
    worker.wait_healthy()
    ends = pipeline.publish(pipeline.catalogue.candidates, candidates)
    pipeline.wait_some_committed(100)

    private.down()
    unhealthy = _saw_unhealthy(worker, within_s=60)
    time.sleep(down_s)
    private.up()
    assert unhealthy, f"the worker never reported the {service} outage on /healthz"

    # Inside pytest's 600 s, so that a stall fails with the workers' stacks and logs.
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout=420)
    assert worker.alive(), worker.log_tail()
    worker.wait_healthy(timeout=60)
    assert_exactly_once(pipeline, candidates)


def _saw_unhealthy(worker: object, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if worker.health() == 503:  # type: ignore[attr-defined]
            return True
        time.sleep(0.5)
    return False
