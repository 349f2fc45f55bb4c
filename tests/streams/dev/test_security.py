"""The secure stack's secrets and how settings carry them to each client (no services run).

The services themselves, refusing and allowing each principal, are
``tests/e2e/test_secure.py``.
"""

from __future__ import annotations

import shlex
import ssl
import stat
import subprocess
from pathlib import Path

import pytest
from confluent_kafka.admin._acl import AclOperation
from confluent_kafka.admin._resource import ResourcePatternType, ResourceType
from pydantic import SecretStr
from redis.connection import SSLConnection, parse_url
from typer.testing import CliRunner

from slotwise.streams.cli import app
from slotwise.streams.config import Settings
from slotwise.streams.dev.kafka_security import acl_bindings, broker_properties, scram_arguments
from slotwise.streams.dev.milvus_server import milvus_service
from slotwise.streams.dev.redis_server import redis_acl
from slotwise.streams.dev.security import PRINCIPALS, StackSecurity
from slotwise.streams.dev.services import Address
from slotwise.streams.dev.stack import Stack, StackError
from slotwise.streams.passes.calibration_app import broker_credentials
from slotwise.topics.catalogue import Catalogue

_REDIS = Address("127.0.0.1", 6390)


@pytest.fixture(scope="module")
def security(tmp_path_factory: pytest.TempPathFactory) -> StackSecurity:
    return StackSecurity.ensure(tmp_path_factory.mktemp("secure"))


def test_settings_render_librdkafka_security_with_the_ca() -> None:
    settings = Settings(
        kafka_bootstrap="127.0.0.1:9192",
        kafka_security_protocol="SASL_SSL",
        kafka_sasl_mechanism="SCRAM-SHA-512",
        kafka_sasl_username="producer",
        kafka_sasl_password=SecretStr("s3cret"),
        kafka_ssl_ca_location=Path("/etc/slotwise/ca.pem"),
    )

    assert settings.librdkafka({"group.id": "g"}) == {
        "bootstrap.servers": "127.0.0.1:9192",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "producer",
        "sasl.password": "s3cret",
        "ssl.ca.location": "/etc/slotwise/ca.pem",
        "group.id": "g",
    }


def test_settings_without_security_render_the_brokers_alone() -> None:
    assert Settings(kafka_bootstrap="k:9092").librdkafka() == {"bootstrap.servers": "k:9092"}


def test_the_environment_names_of_the_kafka_security_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SLOTWISE_KAFKA_SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv("SLOTWISE_KAFKA_SSL_CA_LOCATION", "/ca.pem")
    monkeypatch.setenv("SLOTWISE_KAFKA_SASL_PASSWORD", "pw")

    config = Settings().librdkafka()

    assert (config["security.protocol"], config["ssl.ca.location"]) == ("SASL_SSL", "/ca.pem")
    assert config["sasl.password"] == "pw"


def test_secrets_are_made_once_private_and_reused(security: StackSecurity) -> None:
    data_dir = security.directory.parent

    again = StackSecurity.ensure(data_dir)

    assert again == security
    assert stat.S_IMODE(security.directory.stat().st_mode) == 0o700
    for private in ("passwords.json", "server-key.pem", "ca-key.pem", "server.p12"):
        assert stat.S_IMODE((security.directory / private).stat().st_mode) == 0o600, private
    assert set(security.kafka_passwords) == set(PRINCIPALS)
    assert len(set(security.kafka_passwords.values())) == len(PRINCIPALS)


def test_the_server_certificate_is_trusted_through_the_ca_for_loopback_names(
    security: StackSecurity,
) -> None:
    verified = subprocess.run(
        ["openssl", "verify", "-CAfile", str(security.ca), str(security.server_cert)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stderr
    text = subprocess.run(
        ["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", str(security.server_cert)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DNS:localhost" in text and "IP Address:127.0.0.1" in text
    ssl.create_default_context(cafile=str(security.ca))  # a CA the TLS stack accepts


def test_each_role_gets_only_the_services_it_uses(security: StackSecurity) -> None:
    def env(role: str, *, auth: bool = False) -> dict[str, str]:
        return security.role_env(
            role,  # type: ignore[arg-type]
            kafka_bootstrap="127.0.0.1:9192",
            redis=_REDIS,
            milvus_uri="http://127.0.0.1:19530",
            milvus_auth=auth,
        )

    producer = env("producer")
    assert producer["SLOTWISE_KAFKA_SASL_USERNAME"] == "producer"
    assert producer["SLOTWISE_KAFKA_SASL_PASSWORD"] == security.kafka_passwords["producer"]
    assert producer["SLOTWISE_KAFKA_SSL_CA_LOCATION"] == str(security.ca)
    assert "SLOTWISE_REDIS_URL" not in producer and "SLOTWISE_MILVUS_URI" not in producer
    assert "SLOTWISE_REDIS_URL" not in env("subscriber")
    assert env("worker")["SLOTWISE_REDIS_URL"].startswith("rediss://worker:")
    assert env("server")["SLOTWISE_REDIS_URL"].startswith("rediss://reader:")
    assert "SLOTWISE_MILVUS_TOKEN" not in env("worker")  # Milvus Lite: no auth at all
    assert env("worker", auth=True)["SLOTWISE_MILVUS_TOKEN"] == security.milvus_token("worker")


def test_the_redis_url_carries_tls_user_and_ca_to_redis_py(security: StackSecurity) -> None:
    parsed = parse_url(security.redis_url(_REDIS, "reader"))  # type: ignore[no-untyped-call]

    assert parsed["connection_class"] is SSLConnection
    assert (parsed["username"], parsed["password"]) == (
        "reader",
        security.redis_passwords["reader"],
    )
    assert parsed["ssl_ca_certs"] == str(security.ca)
    assert (parsed["host"], parsed["port"], parsed["db"]) == ("127.0.0.1", 6390, 0)


def test_the_redis_acl_has_no_default_user_and_a_reader_that_cannot_write(
    security: StackSecurity,
) -> None:
    lines = redis_acl(security).splitlines()

    assert lines[0] == "user default off"
    reader = next(line for line in lines if line.startswith("user reader on "))
    assert "-@all" in reader and "+@read" in reader and "+@write" not in reader
    assert f">{security.redis_passwords['reader']}" in reader


def test_the_broker_overrides_the_plain_listener_and_authorizes(security: StackSecurity) -> None:
    text = broker_properties(security, Address("127.0.0.1", 9192), 9193)
    props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    assert props["listeners"] == "SASL_SSL://127.0.0.1:9192,CONTROLLER://127.0.0.1:9193"
    assert props["advertised.listeners"] == "SASL_SSL://127.0.0.1:9192"
    assert props["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert props["authorizer.class.name"].endswith("StandardAuthorizer")
    assert props["allow.everyone.if.no.acl.found"] == "false"
    assert "User:admin" in props["super.users"].split(";")


def test_every_principal_gets_a_scram_credential_at_format(security: StackSecurity) -> None:
    arguments = scram_arguments(security)

    assert arguments[::2] == ["--add-scram"] * len(PRINCIPALS)
    for principal, spec in zip(PRINCIPALS, arguments[1::2], strict=True):
        password = security.kafka_passwords[principal]
        assert spec == f"SCRAM-SHA-512=[name={principal},password={password}]"


def test_the_acls_give_each_principal_its_job_and_no_more() -> None:
    catalogue = Catalogue(prefix="acme")
    granted: dict[str, set[tuple[object, str, object, object]]] = {}
    for b in acl_bindings(catalogue, "acme-worker"):
        entry = (b.restype, b.name, b.resource_pattern_type, b.operation)
        granted.setdefault(b.principal, set()).add(entry)

    topic, literal, prefixed = (
        ResourceType.TOPIC,
        ResourcePatternType.LITERAL,
        ResourcePatternType.PREFIXED,
    )
    write, read = AclOperation.WRITE, AclOperation.READ
    producer = granted["User:producer"]
    assert {(name, op) for _, name, _, op in producer if op in (write, read)} == {
        ("acme.observations.v1", write),
        ("acme.candidates.v1", write),
    }
    subscriber = granted["User:subscriber"]
    assert (topic, "acme.supersessions.v1", literal, read) in subscriber
    assert not any(op == write for *_, op in subscriber)
    assert (ResourceType.GROUP, "acme-subscriber", prefixed, read) in subscriber
    worker = granted["User:worker"]
    assert (topic, "acme.", prefixed, write) in worker
    assert (ResourceType.TRANSACTIONAL_ID, "acme-worker", prefixed, write) in worker
    assert "User:admin" not in granted  # a super user


def test_calibration_speaks_sasl_ssl_to_faust() -> None:
    settings = Settings(
        kafka_security_protocol="SASL_SSL",
        kafka_sasl_mechanism="SCRAM-SHA-512",
        kafka_sasl_username="admin",
        kafka_sasl_password=SecretStr("pw"),
    )

    credentials = broker_credentials(settings)

    assert credentials is not None
    assert broker_credentials(Settings()) is None


def test_env_prints_scriptable_exports_for_a_secure_data_dir(
    security: StackSecurity, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLOTWISE_KAFKA_BOOTSTRAP", "127.0.0.1:9192")
    data_dir = str(security.directory.parent)

    done = CliRunner().invoke(app, ["stack", "env", "--role", "worker", "--data-dir", data_dir])

    assert done.exit_code == 0, done.output
    exported = dict(
        shlex.split(line.removeprefix("export "))[0].split("=", 1)
        for line in done.output.splitlines()
    )
    assert exported["SLOTWISE_KAFKA_SASL_USERNAME"] == "worker"
    assert exported["SLOTWISE_KAFKA_BOOTSTRAP"] == "127.0.0.1:9192"
    assert exported["SLOTWISE_REDIS_URL"].startswith("rediss://worker:")


def test_env_of_a_plain_data_dir_says_it_is_not_secure(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        app, ["stack", "env", "--role", "worker", "--data-dir", str(tmp_path)]
    )

    assert done.exit_code == 1
    assert "not secure" in done.output and "--secure" in done.output


def test_a_broker_formatted_plain_is_not_made_secure_in_place(tmp_path: Path) -> None:
    (tmp_path / "kafka" / "data").mkdir(parents=True)
    (tmp_path / "kafka" / "data" / "meta.properties").write_text("cluster.id=x\n")

    with pytest.raises(StackError, match="formatted without --secure"):
        Stack(Settings(), tmp_path, secure=True)
    assert StackSecurity.recorded(tmp_path) is None


def test_only_a_milvus_server_turns_authorization_on(security: StackSecurity) -> None:
    address, data_dir = Address("127.0.0.1", 19999), security.directory.parent
    uri = f"http://{address}"
    secured = milvus_service("server", address, data_dir, uri, security)
    plain = milvus_service("server", address, data_dir, uri)
    lite = milvus_service("lite", address, data_dir, uri, security)

    assert "--authorization-enabled" in secured.command()
    assert "--authorization-enabled" not in plain.command()
    assert secured.tokens == (security.milvus_token("root"), "root:Milvus")
    assert lite.tokens == plain.tokens == ("",)  # Lite has no authentication at all
