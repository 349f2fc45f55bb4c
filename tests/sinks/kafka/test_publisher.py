"""The transactional publisher against a broker that stops answering mid-commit.

The broker is a private one (its own port and data dir), frozen with SIGSTOP, so the
shared broker other tests use is never disturbed.
"""

from __future__ import annotations

import os
import signal
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.sinks.kafka.publisher import TransactionalPublisher
from slotwise.streams.config import Settings
from slotwise.streams.dev.stack import Stack
from slotwise.streams.dev.testing import service_port
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.outbound import Outbound

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

_COMMIT_TIMEOUT_S = 2.0
_FROZEN_S = 2 * _COMMIT_TIMEOUT_S  # two timed-out commits, fewer than it resumes


@pytest.fixture
def private_broker(stack: Settings, tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A broker of the test's own: its bootstrap address and pid."""
    bootstrap = f"127.0.0.1:{service_port(span=2)}"  # the controller listens on port + 1
    private = Stack(stack.model_copy(update={"kafka_bootstrap": bootstrap}), tmp_path / "stack")
    private.up()  # starts only the broker: Redis and Milvus are the shared ones
    pid = private.kafka[0].our_pid()
    assert pid is not None
    try:
        yield bootstrap, pid
    finally:
        os.kill(pid, signal.SIGCONT)
        private.down()


def test_a_commit_that_timed_out_is_resumed_and_lands_once(
    private_broker: tuple[str, int],
) -> None:
    bootstrap, pid = private_broker
    catalogue = Catalogue(prefix=f"t{uuid.uuid4().hex[:8]}", partitions=1)
    ensure_topics(bootstrap, catalogue)
    publisher = TransactionalPublisher(
        bootstrap, f"t-{uuid.uuid4().hex[:8]}", catalogue, timeout_s=_COMMIT_TIMEOUT_S
    )
    publisher.init()
    messages = [Outbound("facts", f"k{i}".encode(), f"v{i}".encode()) for i in range(20)]

    # Frozen, the broker holds the commit's flush past its timeout; librdkafka then
    # refuses an abort while that commit is under way, and only resuming it ends it.
    os.kill(pid, signal.SIGSTOP)
    thaw = threading.Timer(_FROZEN_S, os.kill, (pid, signal.SIGCONT))
    thaw.start()
    try:
        publisher.commit(messages, [], None)
    finally:
        thaw.cancel()
        os.kill(pid, signal.SIGCONT)
    publisher.commit([Outbound("facts", b"after", b"after")], [], None)  # not stuck
    publisher.close()

    values = _read_committed(bootstrap, catalogue.facts)
    assert values == [m.value for m in messages] + [b"after"]


def _read_committed(bootstrap: str, topic: str) -> list[bytes | None]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"r-{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        found: list[bytes | None] = []
        idle = 0
        while idle < 10:
            message = consumer.poll(0.5)
            if message is None or message.error() is not None:
                idle += 1
                continue
            idle = 0
            found.append(message.value())
        return found
    finally:
        consumer.close()
