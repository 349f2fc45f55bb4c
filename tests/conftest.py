"""Fixtures for tests against the real local services.

The session's ``stack`` brings Kafka, Redis and the Milvus Lite server up with
the same tool a developer uses (``slotwise stack up``), reusing whatever is
already running, so ``pytest`` works on a fresh machine. A stack that cannot
start is an error naming the log to read, never a skip.

Tests keep out of each other's way by name, not by flushing: Kafka topics
under a fresh ``t<uuid8>`` prefix (the ``catalogue`` fixture), and unique
subject ids in Redis and Milvus.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import pytest
from confluent_kafka import Consumer, Producer

from slotwise.sinks.kafka.admin import delete_topics, ensure_topics
from slotwise.streams.config import Settings
from slotwise.streams.dev.stack import Stack, StackError
from slotwise.topics.catalogue import Catalogue

TEST_PARTITIONS = 3

# Run again against a Milvus server by `pytest -m milvus_server` (deploy/local/README.md):
# the Milvus writes, searches, tiers, erasure, the alias-swapping migration, the rebuild
# and the worker-kill test. The session then refuses a Milvus Lite.
MILVUS_SERVER_SUITE = (
    "tests/sinks/milvus/",
    "tests/streams/migration/test_dual_index.py",
    "tests/e2e/test_write_path.py",
    "tests/e2e/test_erasure.py",
    "tests/e2e/test_rebuild.py",
    "tests/e2e/test_dual_index_steps.py",
    "tests/e2e/test_crash.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    on_server = "milvus_server" in config.option.markexpr
    kept, server_only = [], []
    for item in items:
        where = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        if where.startswith(MILVUS_SERVER_SUITE):
            item.add_marker(pytest.mark.milvus_server)
        # A test of the server itself means nothing on the default stack's Milvus Lite:
        # deselected there (and counted as such), selected with -m milvus_server.
        (server_only if item.get_closest_marker("server_only") and not on_server else kept).append(
            item
        )
    if server_only:
        config.hook.pytest_deselected(items=server_only)
        items[:] = kept


class ProducerFactory(Protocol):
    def __call__(self, config: Mapping[str, Any] | None = None) -> Producer: ...


class ConsumerFactory(Protocol):
    def __call__(
        self, group_id: str | None = None, config: Mapping[str, Any] | None = None
    ) -> Consumer: ...


@pytest.fixture(scope="session")
def stack(pytestconfig: pytest.Config) -> Settings:
    """The settings of a running local stack (started here if nothing answers)."""
    settings = Settings()
    try:
        milvus = next(c for c in Stack(settings).up() if c.status.name == "milvus")
    except StackError as exc:
        pytest.fail(f"the local stack did not come up: {exc}", pytrace=False)
    engine = milvus.status.engine or ""
    if "milvus_server" in pytestconfig.option.markexpr and not engine.startswith("server"):
        pytest.fail(
            f"-m milvus_server needs a Milvus server at {settings.milvus_uri}, and {engine} "
            "answers there: slotwise stack up --milvus server, with SLOTWISE_MILVUS_URI at it",
            pytrace=False,
        )
    return settings


@pytest.fixture(scope="session")
def kafka_bootstrap(stack: Settings) -> str:
    return stack.kafka_bootstrap


@pytest.fixture(scope="session")
def redis_url(stack: Settings) -> str:
    return stack.redis_url


@pytest.fixture(scope="session")
def milvus_uri(stack: Settings) -> str:
    return stack.milvus_uri


@pytest.fixture
def catalogue(kafka_bootstrap: str) -> Iterator[Catalogue]:
    """A catalogue under a fresh prefix, 3 partitions, its topics created now and deleted after."""
    catalogue = Catalogue(prefix=f"t{uuid.uuid4().hex[:8]}", partitions=TEST_PARTITIONS)
    ensure_topics(kafka_bootstrap, catalogue)
    yield catalogue
    delete_topics(kafka_bootstrap, [spec.name for spec in catalogue.specs()])


@pytest.fixture
def producer_factory(kafka_bootstrap: str) -> Iterator[ProducerFactory]:
    """``producer_factory(config=None) -> Producer``: idempotent, on the test broker,
    closed after the test."""
    producers: list[Producer] = []

    def make(config: Mapping[str, Any] | None = None) -> Producer:
        producer = Producer(
            {"bootstrap.servers": kafka_bootstrap, "enable.idempotence": True, **(config or {})}
        )
        producers.append(producer)
        return producer

    yield make
    for producer in producers:
        try:
            # Undelivered messages must not hold the teardown for message.timeout.ms.
            producer.flush(5)
            producer.purge()
            producer.close()
        except RuntimeError:
            pass  # the test closed it already


@pytest.fixture
def consumer_factory(kafka_bootstrap: str) -> Iterator[ConsumerFactory]:
    """``consumer_factory(group_id=None, config=None) -> Consumer``: reads from the earliest
    offset in a fresh group unless told otherwise; closed after the test."""
    consumers: list[Consumer] = []

    def make(group_id: str | None = None, config: Mapping[str, Any] | None = None) -> Consumer:
        consumer = Consumer(
            {
                "bootstrap.servers": kafka_bootstrap,
                "group.id": group_id or f"g{uuid.uuid4().hex[:8]}",
                "auto.offset.reset": "earliest",
                **(config or {}),
            }
        )
        consumers.append(consumer)
        return consumer

    yield make
    for consumer in consumers:
        consumer.close()
