"""The local stack's Kafka: one KRaft broker (broker and controller in one JVM) on loopback.

Its jars come from Maven Central through ``deploy/local/kafka/pom.xml`` and are
cached outside the source tree, shared by every data dir.
"""

from __future__ import annotations

import base64
import logging
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from string import Template

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from slotwise.streams.dev.kafka_security import broker_properties, scram_arguments
from slotwise.streams.dev.security import StackSecurity
from slotwise.streams.dev.services import (
    REPO_ROOT,
    Address,
    Service,
    ServiceFailed,
    require_program,
)
from slotwise.topics.connection import client_config

__all__ = ["KAFKA_VERSION", "Kafka", "kafka_classpath_dir", "quiet_probe"]

KAFKA_VERSION = "4.4.0"
_KAFKA_DEPLOY = REPO_ROOT / "deploy" / "local" / "kafka"
_JDK = "a JDK 17 or newer (Debian: apt-get install -y openjdk-17-jdk-headless)"
_MAVEN = "Apache Maven (Debian: apt-get install -y maven)"
# librdkafka logs every refused connection; a probe of a stopped broker expects them.
quiet_probe = logging.getLogger("slotwise.stack.probe")
quiet_probe.propagate = False
quiet_probe.addHandler(logging.NullHandler())


def kafka_classpath_dir(version: str = KAFKA_VERSION) -> Path:
    """Where the broker's jars are cached, outside the source tree and shared by all data dirs."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "slotwise" / f"kafka-{version}" / "lib"


class Kafka(Service):
    """The single broker; ``kafka_cluster.KafkaNode`` makes it one node of several."""

    name = "kafka"
    marker = "kafka.Kafka"
    start_timeout_s = 120.0
    heap = ("-Xms256m", "-Xmx1g")
    node_id = 1

    def __init__(
        self,
        address: Address,
        data_dir: Path,
        version: str,
        security: StackSecurity | None = None,
    ) -> None:
        """``security``: SASL_SSL, SCRAM users and ACLs (``kafka_security.py``); None: plain."""
        super().__init__(address, data_dir)
        self.version = version
        self.security = security
        self.lib = kafka_classpath_dir(version)
        self.properties = self.workdir / "server.properties"

    def healthy(self) -> bool:
        secure = self.security.kafka_client("admin") if self.security else None
        admin = AdminClient(client_config(str(self.address), secure), logger=quiet_probe)
        try:
            return bool(admin.list_topics(timeout=2).brokers)
        except KafkaException:
            return False

    def _java(self) -> list[str]:
        java = require_program("java", _JDK)
        logging_config = _KAFKA_DEPLOY / "log4j2.properties"
        return [
            java,
            *self.heap,
            f"-Dlog4j2.configurationFile={logging_config}",
            "-cp",
            str(self.lib / "*"),
        ]

    def command(self) -> list[str]:
        return [*self._java(), "kafka.Kafka", str(self.properties)]

    def preflight(self) -> None:
        super().preflight()
        if not self.lib.is_dir():
            require_program("mvn", _MAVEN)

    def prepare(self) -> None:
        if not self.lib.is_dir():
            self._resolve_classpath()
        data = self.workdir / "data"
        self.properties.write_text(self.server_properties())
        self.properties.chmod(0o600)  # it holds the admin's password when secure
        if not (data / "meta.properties").exists():
            self._format(data)

    def server_properties(self) -> str:
        """The broker's configuration: ``deploy/local/kafka/server.properties`` filled in."""
        template = Template((_KAFKA_DEPLOY / "server.properties").read_text())
        properties = template.substitute(self.template_fields(), log_dirs=self.workdir / "data")
        if self.security is not None:
            properties += broker_properties(self.security, self.address, self.address.port + 1)
        return properties

    def template_fields(self) -> dict[str, object]:
        """``server.properties``' fields: one node, its controller on the next port, every
        internal topic with one replica."""
        controller_port = self.address.port + 1
        return {
            "host": self.address.host,
            "broker_port": self.address.port,
            "controller_port": controller_port,
            "node_id": self.node_id,
            "voters": f"1@{self.address.host}:{controller_port}",
            "replication": 1,
            "min_isr": 1,
        }

    def cluster_id(self) -> str:
        """The id ``_format`` writes: a fresh one, as Kafka's Uuid.randomUuid() prints it."""
        cluster_id = "-"
        while cluster_id.startswith("-"):  # a leading '-' would read as a flag
            cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        return cluster_id

    def _resolve_classpath(self) -> None:
        mvn = require_program("mvn", _MAVEN)
        staging = self.lib.with_name(f"lib.{os.getpid()}.partial")
        staging.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
        log = self.workdir / "maven.log"
        with log.open("wb") as out:
            done = subprocess.run(
                [
                    mvn,
                    "-q",
                    "-B",
                    "-Dstyle.color=never",
                    "-f",
                    str(_KAFKA_DEPLOY / "pom.xml"),
                    f"-Dkafka.version={self.version}",
                    f"-Dlib.dir={staging}",
                    "dependency:copy-dependencies",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
            )
        if done.returncode != 0 or not staging.is_dir():
            raise ServiceFailed(f"Maven could not resolve Kafka {self.version}", log_path=log)
        try:
            staging.rename(self.lib)  # atomic: a half-copied classpath is never used
        except OSError:
            if not self.lib.is_dir():
                raise
            shutil.rmtree(staging)  # another process resolved it first

    def _format(self, data: Path) -> None:
        with self.log_path.open("ab") as log:
            done = subprocess.run(
                [
                    *self._java(),
                    "kafka.tools.StorageTool",
                    "format",
                    "-t",
                    self.cluster_id(),
                    "-c",
                    str(self.properties),
                    *(scram_arguments(self.security) if self.security else []),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                check=False,
            )
        if done.returncode != 0:
            raise ServiceFailed("formatting Kafka's storage failed", log_path=self.log_path)
