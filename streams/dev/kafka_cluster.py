"""The local stack's Kafka as a three-node KRaft cluster on loopback (``stack up --brokers 3``).

Each node is a broker and a controller in one JVM, as the single broker is, and
the three controllers are the quorum's voters: any one node can die and the
cluster keeps electing leaders and taking writes. Node ``n`` serves clients on
the bootstrap port + 2(n - 1) and its controller on the port after, so from the
default bootstrap: 9092/9093, 9094/9095, 9096/9097. Node 1 takes the single
broker's ports, but its own data dir (``kafka-1/``): a single-voter log cannot
join a three-voter quorum.

Every topic gets three replicas, a write is acknowledged once two hold it
(``min.insync.replicas=2``), and a replica that fell out of sync never becomes
leader. The three are formatted with one cluster id, kept in
``<data dir>/kafka-cluster/`` beside the recorded node count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from slotwise.streams.dev.kafka_broker import Kafka, quiet_probe
from slotwise.streams.dev.security import StackSecurity
from slotwise.streams.dev.services import Address, StackError
from slotwise.topics.connection import client_config

__all__ = [
    "CLUSTER_SIZES",
    "KafkaNode",
    "active_controller",
    "bootstrap_servers",
    "kafka_services",
    "node_addresses",
    "record_brokers",
    "recorded_brokers",
]

CLUSTER_SIZES = (1, 3)
"""How many brokers the local stack runs: one, or a quorum of three that outlives one death."""
_CLUSTER_DIR = "kafka-cluster"  # the cluster id and the recorded size
# Three JVMs on a developer's machine: the single broker's 1 GiB ceiling each is more than
# a test's load needs (RSS measured in deploy/local/README.md).
_NODE_HEAP = ("-Xms128m", "-Xmx512m")


def node_addresses(bootstrap: Address, brokers: int) -> tuple[Address, ...]:
    """The client addresses of ``brokers`` nodes; each node's controller is on the port after."""
    return tuple(Address(bootstrap.host, bootstrap.port + 2 * i) for i in range(brokers))


def bootstrap_servers(bootstrap: Address, brokers: int) -> str:
    """What ``SLOTWISE_KAFKA_BOOTSTRAP`` must list, so a client starts while any node is down."""
    return ",".join(str(a) for a in node_addresses(bootstrap, brokers))


def _cluster_dir(data_dir: Path) -> Path:
    return data_dir / _CLUSTER_DIR


class KafkaNode(Kafka):
    """Node ``node_id`` (from 1) of a cluster whose nodes listen at ``nodes``."""

    heap = _NODE_HEAP

    def __init__(
        self,
        node_id: int,
        nodes: Sequence[Address],
        data_dir: Path,
        version: str,
        security: StackSecurity | None = None,
    ) -> None:
        self.name = f"kafka-{node_id}"  # before the base class names the node's files after it
        super().__init__(nodes[node_id - 1], data_dir, version, security)
        self.node_id = node_id
        self.nodes = tuple(nodes)
        self.data_dir = data_dir

    def template_fields(self) -> dict[str, object]:
        voters = ",".join(f"{i}@{a.host}:{a.port + 1}" for i, a in enumerate(self.nodes, 1))
        replication = min(len(self.nodes), 3)
        return {
            **super().template_fields(),
            "node_id": self.node_id,
            "voters": voters,
            "replication": replication,
            "min_isr": max(replication - 1, 1),
        }

    def cluster_id(self) -> str:
        # The first node formatted draws the id, the others read it: the stack's lock
        # serializes the formats, so there is no race here.
        path = _cluster_dir(self.data_dir) / "cluster.id"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{super().cluster_id()}\n")
        return path.read_text().strip()

    def healthy(self) -> bool:
        # Registered and unfenced: the metadata of a live quorum lists this node.
        secure = self.security.kafka_client("admin") if self.security else None
        admin = AdminClient(client_config(str(self.address), secure), logger=quiet_probe)
        try:
            return self.node_id in admin.list_topics(timeout=2).brokers
        except KafkaException:
            return False

    def engine(self) -> str | None:
        leader = active_controller(self.data_dir, len(self.nodes))
        return "KRaft voter, active controller" if leader == self.node_id else "KRaft voter"


def active_controller(data_dir: Path, brokers: int) -> int | None:
    """The node that leads the controller quorum, as the voters last recorded it (the
    newest epoch wins), or None while an election runs or before the first one."""
    newest: tuple[int, int] | None = None
    for node_id in range(1, brokers + 1):
        state_file = (
            data_dir / f"kafka-{node_id}" / "data" / "__cluster_metadata-0" / "quorum-state"
        )
        try:
            state = json.loads(state_file.read_text())
            epoch, leader = int(state["leaderEpoch"]), int(state["leaderId"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not formatted yet, or being rewritten
        if newest is None or epoch > newest[0]:
            newest = (epoch, leader)
    return newest[1] if newest is not None and newest[1] > 0 else None


def kafka_services(
    bootstrap: Address,
    data_dir: Path,
    version: str,
    brokers: int,
    security: StackSecurity | None = None,
) -> tuple[Kafka, ...]:
    """The single broker, or the nodes of a cluster of ``brokers``."""
    if brokers not in CLUSTER_SIZES:
        sizes = " or ".join(map(str, CLUSTER_SIZES))
        raise StackError(f"the local Kafka runs {sizes} brokers, not {brokers}")
    if brokers == 1:
        return (Kafka(bootstrap, data_dir, version, security),)
    nodes = node_addresses(bootstrap, brokers)
    return tuple(KafkaNode(n, nodes, data_dir, version, security) for n in range(1, brokers + 1))


def recorded_brokers(data_dir: Path) -> int | None:
    """How many brokers this data dir started and has not stopped, if it started a cluster."""
    try:
        return int((_cluster_dir(data_dir) / "brokers").read_text())
    except (OSError, ValueError):
        return None


def record_brokers(data_dir: Path, brokers: int | None) -> None:
    """Remember a started cluster's size for ``down`` and ``status``; None forgets it."""
    path = _cluster_dir(data_dir) / "brokers"
    if brokers is None or brokers == 1:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{brokers}\n")
