"""The worker's Kafka clients, built from settings: its consumer and its publisher.

Both start from ``Settings.librdkafka()`` (the brokers and their security); what
is added here is what the exactly-once loop needs of them.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from confluent_kafka import Consumer

from slotwise.sinks.kafka.access import check_access
from slotwise.sinks.kafka.publisher import TransactionalPublisher
from slotwise.streams.config import KafkaSettings, Settings
from slotwise.streams.runtime.ports import WorkerClients

__all__ = ["kafka_clients", "worker_consumer", "worker_publisher"]


def kafka_clients(settings: Settings) -> WorkerClients:
    """The worker's clients on the brokers of ``settings`` (tests hand the worker the
    in-memory ones of ``streams/runtime/testing.py`` instead). A refused login or
    certificate fails the start here, in words, instead of a consumer polling forever."""
    check_access(settings.librdkafka())
    return WorkerClients(
        consumer=partial(worker_consumer, settings), publisher=partial(worker_publisher, settings)
    )


def worker_consumer(settings: Settings, group_instance_id: str | None = None) -> Consumer:
    """Offsets committed only through the publisher's transactions; ``read_committed``."""
    return Consumer(
        settings.librdkafka(
            {
                "group.id": settings.group_id,
                **_group_protocol(settings, group_instance_id),
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "fetch.max.bytes": 16 * 1024 * 1024,
            }
        )
    )


def worker_publisher(settings: KafkaSettings, transactional_id: str) -> TransactionalPublisher:
    # A commit on a healthy broker takes milliseconds; failing after 10 s lets an
    # outage show on /healthz quickly, and the same batch is simply retried.
    return TransactionalPublisher(
        settings.librdkafka(), transactional_id, settings.catalogue(), timeout_s=10.0
    )


def _group_protocol(settings: Settings, group_instance_id: str | None) -> dict[str, Any]:
    if settings.group_protocol == "consumer":
        # KIP-848: the broker assigns, incrementally, and the range assignor gives a
        # replica the same partition numbers of both topics, so each topic spreads
        # evenly. Cooperative-sticky balances counts only: with two replicas, one took
        # every observations partition and the other every candidates partition.
        # No static membership: such a broker refuses a static member restarted while
        # its crashed predecessor's session lasts (UNRELEASED_INSTANCE_ID, fatal to the
        # consumer), so a crash restart would wait out that session all the same.
        return {"group.protocol": "consumer", "group.remote.assignor": "range"}
    return {
        "group.protocol": "classic",
        "partition.assignment.strategy": "cooperative-sticky",
        "session.timeout.ms": settings.session_timeout_ms,
        # A static member restarted under the same name takes its partitions back at
        # once, instead of the group waiting for the dead session.
        **({"group.instance.id": group_instance_id} if group_instance_id else {}),
    }
