"""`slotwise stack up --brokers 3`: the nodes' ports, quorum and replication settings, the
recorded size, and a cluster half taken by a Kafka the data dir did not start.

Nothing here starts a JVM: the cluster itself runs in ``tests/e2e/test_cluster.py``.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from slotwise.streams.cli import app
from slotwise.streams.config import Settings
from slotwise.streams.dev.kafka_cluster import record_brokers
from slotwise.streams.dev.stack import Stack, StackError
from slotwise.streams.dev.testing import service_port


def _settings(tmp_path: Path) -> Settings:
    """Nothing answers at these addresses: six ports for the cluster, one each for the rest."""
    return Settings(
        kafka_bootstrap=f"127.0.0.1:{service_port(span=6)}",
        redis_url=f"redis://127.0.0.1:{service_port()}/0",
        milvus_uri=f"http://127.0.0.1:{service_port()}",
        data_dir=tmp_path,
    )


def _properties(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if line and line[0] != "#")
    return {key: value for key, value in pairs}


def test_three_brokers_are_three_voters_on_consecutive_port_pairs(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    first = int(settings.kafka_bootstrap.rpartition(":")[2])

    stack = Stack(settings, brokers=3)
    nodes = [_properties(k.server_properties()) for k in stack.kafka]

    voters = f"1@127.0.0.1:{first + 1},2@127.0.0.1:{first + 3},3@127.0.0.1:{first + 5}"
    for n, node in enumerate(nodes):
        broker, controller = first + 2 * n, first + 2 * n + 1
        assert node["node.id"] == str(n + 1)
        assert node["process.roles"] == "broker,controller"
        assert node["controller.quorum.voters"] == voters
        assert node["listeners"] == (
            f"PLAINTEXT://127.0.0.1:{broker},CONTROLLER://127.0.0.1:{controller}"
        )
        assert node["advertised.listeners"] == f"PLAINTEXT://127.0.0.1:{broker}"
        assert node["log.dirs"] == str(tmp_path / f"kafka-{n + 1}" / "data")
        assert {
            key: node[key]
            for key in (
                "default.replication.factor",
                "min.insync.replicas",
                "unclean.leader.election.enable",
                "offsets.topic.replication.factor",
                "transaction.state.log.replication.factor",
                "transaction.state.log.min.isr",
            )
        } == {
            "default.replication.factor": "3",
            "min.insync.replicas": "2",
            "unclean.leader.election.enable": "false",
            "offsets.topic.replication.factor": "3",
            "transaction.state.log.replication.factor": "3",
            "transaction.state.log.min.isr": "2",
        }
    assert stack.kafka_bootstrap == f"127.0.0.1:{first},127.0.0.1:{first + 2},127.0.0.1:{first + 4}"
    assert [s.name for s in stack.status()] == ["kafka-1", "kafka-2", "kafka-3", "redis", "milvus"]


def test_one_broker_stays_the_single_voter_with_one_replica(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    first = int(settings.kafka_bootstrap.rpartition(":")[2])

    stack = Stack(settings)
    (kafka,) = stack.kafka
    node = _properties(kafka.server_properties())

    assert (stack.brokers, kafka.name, stack.kafka_bootstrap) == (1, "kafka", f"127.0.0.1:{first}")
    assert node["node.id"] == "1"
    assert node["controller.quorum.voters"] == f"1@127.0.0.1:{first + 1}"
    assert node["default.replication.factor"] == node["min.insync.replicas"] == "1"
    assert node["transaction.state.log.min.isr"] == "1"
    assert node["log.dirs"] == str(tmp_path / "kafka" / "data")


def test_status_and_down_without_a_flag_act_on_the_recorded_cluster(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    record_brokers(tmp_path, 3)

    assert Stack(settings).brokers == 3
    assert Stack(settings, brokers=1).brokers == 1  # a flag wins
    record_brokers(tmp_path, None)
    assert Stack(settings).brokers == 1


@pytest.mark.parametrize("brokers", [2, 4])
def test_only_one_or_three_brokers(tmp_path: Path, brokers: int) -> None:
    with pytest.raises(StackError, match="1 or 3 brokers"):
        Stack(_settings(tmp_path), brokers=brokers)


def test_a_cluster_whose_first_port_another_kafka_holds_is_refused(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    stack = Stack(settings, brokers=3)
    first = stack.kafka[0].address
    with socket.create_server((first.host, first.port)):
        with pytest.raises(StackError, match=f"did not start .* answers at {first}"):
            stack.up()
    assert not any(s.pid for s in stack.status()), "a service started anyway"


def test_the_cli_takes_brokers_and_prints_the_bootstrap_list(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    record_brokers(tmp_path, 3)
    env = {"SLOTWISE_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
           "SLOTWISE_REDIS_URL": settings.redis_url,
           "SLOTWISE_MILVUS_URI": settings.milvus_uri}  # fmt: skip

    shown = CliRunner().invoke(app, ["stack", "status", "--data-dir", str(tmp_path)], env=env)

    assert shown.exit_code == 1, shown.output  # nothing runs
    assert "kafka-3" in shown.output
    bootstrap = Stack(settings, brokers=3).kafka_bootstrap
    assert f"export SLOTWISE_KAFKA_BOOTSTRAP={bootstrap}" in shown.output.replace("\n", "")
    helped = CliRunner().invoke(app, ["stack", "up", "--help"], terminal_width=200)
    assert "--brokers" in helped.output


def test_a_secure_cluster_node_listens_on_sasl_ssl_at_its_own_port(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    first = int(settings.kafka_bootstrap.rpartition(":")[2])

    stack = Stack(settings, brokers=3, secure=True)
    nodes = [_properties(k.server_properties()) for k in stack.kafka]

    for n, node in enumerate(nodes):
        broker, controller = first + 2 * n, first + 2 * n + 1
        # The secure lines come last in the file and win over the plain template's.
        assert node["listeners"] == (
            f"SASL_SSL://127.0.0.1:{broker},CONTROLLER://127.0.0.1:{controller}"
        )
        assert node["inter.broker.listener.name"] == "SASL_SSL"
        assert node["node.id"] == str(n + 1)
        assert node["min.insync.replicas"] == "2"
    bootstrap = stack.role_env("worker")["SLOTWISE_KAFKA_BOOTSTRAP"]
    assert bootstrap == stack.kafka_bootstrap
