"""Topic creation against the real broker: idempotent, catalogue settings, co-partitioning kept."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._config import ConfigResource  # the stub does not re-export it
from confluent_kafka.cimpl import NewTopic
from typer.testing import CliRunner

from slotwise.sinks.kafka.admin import (
    PartitionMismatch,
    TopicRequestFailed,
    broker_replication_factor,
    delete_topics,
    ensure_topics,
)
from slotwise.streams.cli import app
from slotwise.topics.catalogue import Catalogue

pytestmark = pytest.mark.kafka

_DAY_MS = 24 * 3600 * 1000


@pytest.fixture
def fresh(kafka_bootstrap: str) -> Iterator[Catalogue]:
    """A catalogue whose topics do not exist yet; whatever a test creates is deleted after."""
    catalogue = Catalogue(prefix=f"t{uuid.uuid4().hex[:8]}", partitions=3)
    yield catalogue
    delete_topics(kafka_bootstrap, [spec.name for spec in catalogue.specs()])


def _topics(kafka_bootstrap: str, prefix: str) -> dict[str, int]:
    metadata = AdminClient({"bootstrap.servers": kafka_bootstrap}).list_topics(timeout=10)
    return {
        name: len(topic.partitions)
        for name, topic in metadata.topics.items()
        if name.startswith(f"{prefix}.")
    }


def test_the_second_call_creates_nothing_and_says_so(
    kafka_bootstrap: str, fresh: Catalogue
) -> None:
    first = ensure_topics(kafka_bootstrap, fresh)
    second = ensure_topics(kafka_bootstrap, fresh)

    names = tuple(spec.name for spec in fresh.specs())
    assert first.created == names
    assert first.existing == ()
    assert second.created == ()
    assert second.existing == names
    assert second.summary() == "all 7 topics already exist; nothing created"
    assert _topics(kafka_bootstrap, fresh.prefix) == dict.fromkeys(names, 3)


def test_topics_carry_the_catalogues_cleanup_policy_and_retention(
    kafka_bootstrap: str, catalogue: Catalogue
) -> None:
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    resources = [ConfigResource(ConfigResource.Type.TOPIC, s.name) for s in catalogue.specs()]
    described = {
        resource.name: future.result(timeout=10)
        for resource, future in admin.describe_configs(resources).items()
    }
    for spec in catalogue.specs():
        config = described[spec.name]
        assert config["cleanup.policy"].value == spec.cleanup_policy
        if spec.retention_ms is not None:
            assert config["retention.ms"].value == str(spec.retention_ms)
    assert described[catalogue.facts]["cleanup.policy"].value == "compact"
    assert described[catalogue.supersessions]["retention.ms"].value == str(30 * _DAY_MS)


def test_a_partition_count_that_differs_from_the_existing_topics_is_refused(
    kafka_bootstrap: str, catalogue: Catalogue
) -> None:
    wider = Catalogue(prefix=catalogue.prefix, partitions=4)

    with pytest.raises(PartitionMismatch) as refused:
        ensure_topics(kafka_bootstrap, wider)

    keyed = {s.name for s in catalogue.specs() if s.keyed_by_subject}
    assert refused.value.partitions == dict.fromkeys(keyed, 3)
    assert refused.value.expected == 4
    message = str(refused.value)
    assert "must all have 4 partitions" in message
    assert f"{catalogue.observations} has 3" in message
    assert _topics(kafka_bootstrap, catalogue.prefix) == {s.name: 3 for s in catalogue.specs()}


def test_one_topic_out_of_step_with_its_peers_is_refused_before_anything_is_created(
    kafka_bootstrap: str, fresh: Catalogue
) -> None:
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(fresh.candidates, num_partitions=2)])[fresh.candidates].result(
        timeout=30
    )
    deadline = time.monotonic() + 30
    while fresh.candidates not in _topics(kafka_bootstrap, fresh.prefix):
        assert time.monotonic() < deadline, "the topic made by hand never became visible"
        time.sleep(0.1)

    with pytest.raises(PartitionMismatch) as refused:
        ensure_topics(kafka_bootstrap, fresh)

    assert refused.value.partitions == {fresh.candidates: 2}
    assert f"{fresh.candidates} has 2" in str(refused.value)
    assert _topics(kafka_bootstrap, fresh.prefix) == {fresh.candidates: 2}


def test_deleting_topics_that_do_not_exist_is_not_an_error(kafka_bootstrap: str) -> None:
    delete_topics(kafka_bootstrap, [f"t{uuid.uuid4().hex[:8]}.nothing.v1"])


def test_topics_create_twice_is_a_no_op_the_second_time(
    kafka_bootstrap: str, fresh: Catalogue
) -> None:
    runner = CliRunner()
    env = {"SLOTWISE_KAFKA_BOOTSTRAP": kafka_bootstrap}
    args = ["topics", "create", "--prefix", fresh.prefix, "--partitions", "3"]

    first = runner.invoke(app, args, env=env)
    second = runner.invoke(app, args, env=env)
    mismatched = runner.invoke(app, [*args[:-1], "5"], env=env)

    assert first.exit_code == 0, first.output
    assert "created 7 topics" in first.output
    assert second.exit_code == 0, second.output
    assert "nothing created" in second.output
    assert "created " + fresh.observations not in second.output
    assert mismatched.exit_code == 1
    assert "refused" in mismatched.output
    assert _topics(kafka_bootstrap, fresh.prefix) == {s.name: 3 for s in fresh.specs()}


def test_topics_take_the_brokers_replication_factor_unless_one_is_given(
    kafka_bootstrap: str, fresh: Catalogue
) -> None:
    assert broker_replication_factor(kafka_bootstrap) == 1  # the single local broker

    with pytest.raises(TopicRequestFailed, match="replication factor"):
        ensure_topics(kafka_bootstrap, fresh, replication_factor=2)  # one broker cannot
    ensure_topics(kafka_bootstrap, fresh)

    metadata = AdminClient({"bootstrap.servers": kafka_bootstrap}).list_topics(timeout=10)
    replicas = {
        len(p.replicas) for s in fresh.specs() for p in metadata.topics[s.name].partitions.values()
    }
    assert replicas == {1}
