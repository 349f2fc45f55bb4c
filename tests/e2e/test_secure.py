"""The secure stack end to end: each principal does its job and is refused outside it.

A broker on SASL_SSL with SCRAM-SHA-512 and ACLs and a Redis on TLS with ACL
users are brought up here (``slotwise stack up --secure``'s code) in a data dir
of this module, on spare ports; the worker's Milvus is the shared Lite, which
has no authentication. The last test starts a Milvus server with authorization
on its own: PyPI's server holds etcd's fixed peer port (2380), so no other
Milvus server may run on the machine meanwhile, which is why this module
carries no ``milvus`` marker (``-m milvus_server`` sessions run one).

Every refusal must arrive as a clear error within a bound, never as a client
waiting forever.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import redis
from confluent_kafka import KafkaError, Producer
from pymilvus import MilvusClient
from pymilvus.exceptions import MilvusException

from slotwise.client import AccessDenied, Client, Fact, SupersessionEvent
from slotwise.sinks.kafka.access import KafkaAccessDenied, check_access
from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.streams.config import Settings
from slotwise.streams.dev.demo import observations
from slotwise.streams.dev.milvus_security import grant_users
from slotwise.streams.dev.milvus_server import MilvusServer
from slotwise.streams.dev.security import Role
from slotwise.streams.dev.services import Address
from slotwise.streams.dev.stack import Stack
from slotwise.streams.dev.testing import WorkerProcess, service_port
from slotwise.streams.read.store import open_store
from slotwise.streams.read.subject_log import SubjectLog

pytestmark = [
    pytest.mark.secure,
    pytest.mark.slow,
    pytest.mark.kafka,
    pytest.mark.redis,
]

_REFUSAL_BOUND_S = 20.0


@dataclass(frozen=True)
class SecureStack:
    stack: Stack
    names: dict[str, object]
    """Settings shared by every role: addresses, namespace, partitions."""
    log_dir: Path

    def settings(self, role: Role, **changes: object) -> Settings:
        env = self.stack.role_env(role)
        fields = {k.removeprefix("SLOTWISE_").lower(): v for k, v in env.items()}
        return Settings(**{**self.names, **fields, **changes})  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def secure(stack: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureStack]:
    data_dir = tmp_path_factory.mktemp("secure-stack")
    namespace = f"t{uuid.uuid4().hex[:8]}"
    names: dict[str, object] = {
        "kafka_bootstrap": f"127.0.0.1:{service_port(span=2)}",  # the broker, its controller
        "redis_url": f"redis://127.0.0.1:{service_port()}/0",
        "milvus_uri": stack.milvus_uri,  # the shared Lite answers: reused, never stopped
        "namespace": namespace,
        "partitions": 3,
        "data_dir": data_dir,
    }
    started = time.monotonic()
    secured = Stack(Settings(**names), data_dir, secure=True, milvus="lite")  # type: ignore[arg-type]
    try:
        secured.up()
        print(f"secure stack up in {time.monotonic() - started:.1f} s")
        made = SecureStack(secured, names, tmp_path_factory.mktemp("secure-logs"))
        admin = made.settings("admin")
        ensure_topics(admin.librdkafka(), admin.catalogue())
        yield made
    finally:
        secured.down(grace_s=10)


def _bounded(started: float) -> None:
    assert time.monotonic() - started < _REFUSAL_BOUND_S, "the refusal took too long"


def test_the_worker_turns_a_producers_observations_into_a_subscribers_supersession(
    secure: SecureStack,
) -> None:
    worker_settings = secure.settings("worker")
    worker = WorkerProcess(worker_settings, "w0", secure.log_dir / "worker.log").start()
    try:
        worker.wait_healthy()
        subject = f"ana-{uuid.uuid4().hex[:6]}"
        with Client(secure.settings("producer")) as producer:
            for turn in observations(subject):
                producer.publish(turn, timeout=30)
        with Client(secure.settings("subscriber")) as subscriber:
            group = f"{secure.names['namespace']}-subscriber-test"
            events = subscriber.subscribe("supersessions", group=group, from_beginning=True)
            deadline = time.monotonic() + 120
            found: list[SupersessionEvent] = []
            while time.monotonic() < deadline and not found:
                worker.check_alive()
                record = events.poll(1.0)
                if isinstance(record, SupersessionEvent) and record.subject_id == subject:
                    found.append(record)
            events.close()
        assert found, f"no supersession for {subject}:\n{worker.log_tail()}"
        assert found[0].attribute in {"employer", "database"}
        _the_server_role_reads(secure.settings("server"), subject)
    finally:
        worker.stop(30)


def _the_server_role_reads(settings: Settings, subject: str) -> None:
    """What ``slotwise serve`` and ``mcp`` read, as their principal and Redis user."""
    log = SubjectLog(settings.librdkafka())
    try:
        page = log.newest(settings.catalogue().supersessions, subject, 10, (SupersessionEvent,))
    finally:
        log.close()
    assert page.records, "the server principal read no supersession"

    async def facts() -> list[Fact]:
        store = open_store(settings)
        try:
            return await store.facts(subject, include_history=True)
        finally:
            await store.close()

    assert any(f.status == "superseded" for f in asyncio.run(facts()))


def test_a_producer_may_not_read_supersessions(secure: SecureStack) -> None:
    started = time.monotonic()
    with Client(secure.settings("producer")) as producer:
        group = f"{secure.names['namespace']}-subscriber-sneak"
        events = producer.subscribe("supersessions", group=group, from_beginning=True)
        with pytest.raises(AccessDenied, match="authorization failed"):
            while time.monotonic() - started < _REFUSAL_BOUND_S:
                events.poll(0.5)
        events.close()
    _bounded(started)


def test_a_producer_may_not_write_state_topics(secure: SecureStack) -> None:
    settings = secure.settings("producer")
    errors: list[KafkaError | None] = []
    producer = Producer(settings.librdkafka({"message.timeout.ms": 15_000}))
    started = time.monotonic()
    producer.produce(
        settings.catalogue().facts,
        key=b"ana",
        value=b"{}",
        on_delivery=lambda err, _msg: errors.append(err),
    )
    producer.flush(_REFUSAL_BOUND_S)
    _bounded(started)
    assert [e.code() if e else None for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]


def test_a_subscriber_may_not_publish(secure: SecureStack) -> None:
    (turn, *_) = observations(f"bo-{uuid.uuid4().hex[:6]}")
    started = time.monotonic()
    with (
        Client(secure.settings("subscriber")) as subscriber,
        pytest.raises(AccessDenied, match="Topic authorization failed"),
    ):
        subscriber.publish(turn, timeout=_REFUSAL_BOUND_S)
    _bounded(started)


def test_a_wrong_password_fails_fast_and_says_so(secure: SecureStack) -> None:
    wrong = secure.settings("producer", kafka_sasl_password="not-the-password")
    (turn, *_) = observations("cy")
    started = time.monotonic()
    with Client(wrong) as producer, pytest.raises(AccessDenied, match="invalid credentials"):
        producer.publish(turn, timeout=60)
    _bounded(started)


def test_a_worker_with_a_wrong_password_exits_saying_why(secure: SecureStack) -> None:
    wrong = secure.settings("worker", kafka_sasl_password="not-the-password")
    worker = WorkerProcess(wrong, "bad", secure.log_dir / "bad-worker.log").start()
    try:
        deadline = time.monotonic() + 60
        while worker.alive() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not worker.alive(), "the worker kept running with a refused login"
        log = worker.log_tail()
        assert "refused to start: kafka refused the connection" in log, log
        assert "invalid credentials" in log and "Traceback" not in log, log
    finally:
        worker.stop(10)


def test_kafka_without_the_ca_is_refused_in_words(secure: SecureStack) -> None:
    config = secure.settings("producer").librdkafka()
    del config["ssl.ca.location"]
    started = time.monotonic()
    with pytest.raises(KafkaAccessDenied, match="certificate verify failed"):
        check_access(config)
    _bounded(started)


def test_a_plaintext_client_is_told_the_brokers_speak_tls(secure: SecureStack) -> None:
    bootstrap = secure.settings("producer").kafka_bootstrap
    started = time.monotonic()
    with pytest.raises(KafkaAccessDenied, match="speaks TLS"):
        check_access(bootstrap)
    _bounded(started)


def test_the_redis_reader_reads_but_may_not_write(secure: SecureStack) -> None:
    worker = redis.Redis.from_url(secure.settings("worker").redis_url, socket_timeout=5)
    reader = redis.Redis.from_url(secure.settings("server").redis_url, socket_timeout=5)
    key = f"{secure.names['namespace']}:probe"
    try:
        worker.set(key, b"1")
        assert reader.get(key) == b"1"
        with pytest.raises(redis.exceptions.NoPermissionError, match="no permissions"):
            reader.set(key, b"2")
    finally:
        worker.close()
        reader.close()


def test_redis_without_the_ca_or_without_tls_is_refused(secure: SecureStack) -> None:
    url = secure.settings("worker").redis_url
    no_ca = redis.Redis.from_url(url.split("?")[0], socket_connect_timeout=5, socket_timeout=5)
    plain = redis.Redis.from_url(
        url.split("?")[0].replace("rediss://", "redis://"),
        socket_connect_timeout=5,
        socket_timeout=5,
    )
    started = time.monotonic()
    try:
        with pytest.raises(redis.exceptions.ConnectionError, match="certificate verify failed"):
            no_ca.ping()
        with pytest.raises(redis.exceptions.ConnectionError):
            plain.ping()
    finally:
        no_ca.close()
        plain.close()
    _bounded(started)


@pytest.fixture
def milvus_server(secure: SecureStack) -> Iterator[str]:
    """A Milvus server with authorization on, its users granted as a secure ``up`` does."""
    if Address("127.0.0.1", 2380).listening():
        pytest.fail(
            "another Milvus server runs on this machine (it holds etcd's peer port 2380); "
            "stop it, or run this module in a network namespace (deploy/local/README.md, "
            "The secure stack)",
            pytrace=False,
        )
    security = secure.stack.security
    assert security is not None
    address = Address("127.0.0.1", service_port())
    uri = f"http://{address}"
    server = MilvusServer(address, secure.stack.data_dir, uri, security)
    server.wait_healthy(server.start())
    try:
        grant_users(security, uri)
        yield uri
    finally:
        server.stop(grace_s=10)


def test_milvus_knows_no_anonymous_caller_and_the_server_role_only_reads(
    secure: SecureStack, milvus_server: str
) -> None:
    security = secure.stack.security
    assert security is not None
    name = f"{secure.names['namespace']}_probe"
    # pymilvus raises its own exception or gRPC's, depending on where the call is refused.
    refused = (MilvusException, grpc.RpcError)
    started = time.monotonic()
    with pytest.raises(refused):
        MilvusClient(milvus_server, timeout=5).list_collections()
    with pytest.raises(refused, match="auth check failure"):  # the factory password is gone
        MilvusClient(milvus_server, token="root:Milvus", timeout=5).list_collections()
    _bounded(started)
    worker = MilvusClient(milvus_server, token=security.milvus_token("worker"), timeout=30)
    reader = MilvusClient(milvus_server, token=security.milvus_token("server"), timeout=30)
    try:
        worker.create_collection(name, dimension=4)
        worker.insert(name, [{"id": 1, "vector": [0.1, 0.2, 0.3, 0.4]}])
        assert len(reader.search(name, [[0.1, 0.2, 0.3, 0.4]], limit=1)) == 1
        with pytest.raises(refused, match="PrivilegeInsert: permission deny to server"):
            reader.insert(name, [{"id": 2, "vector": [0.1, 0.2, 0.3, 0.4]}])
        with pytest.raises(refused, match="PrivilegeDropCollection: permission deny"):
            reader.drop_collection(name)
    finally:
        worker.drop_collection(name)
        worker.close()
        reader.close()
