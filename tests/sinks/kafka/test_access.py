"""Refused logins and ACLs, recognised for what they are (live: tests/e2e/test_secure.py)."""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaError

from slotwise.sinks.kafka.access import KafkaAccessDenied, check_access, refusal
from slotwise.streams.dev.testing import free_port


@pytest.mark.parametrize(
    "code",
    [
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.GROUP_AUTHORIZATION_FAILED,
        KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    ],
)
def test_an_acl_refusal_is_access_denied_naming_the_code(code: int) -> None:
    denied = refusal(KafkaError(code))

    assert isinstance(denied, KafkaAccessDenied)
    assert KafkaError(code).name() in str(denied)


@pytest.mark.parametrize("code", [KafkaError._PARTITION_EOF, KafkaError._TRANSPORT])
def test_other_errors_and_none_are_not_refusals(code: int) -> None:
    assert refusal(KafkaError(code)) is None
    assert refusal(None) is None


def test_no_broker_is_no_verdict_and_no_wait() -> None:
    started = time.monotonic()

    check_access(f"127.0.0.1:{free_port()}", timeout_s=10.0)

    assert time.monotonic() - started < 5.0


class _Listener:
    """A loopback port that hangs up on every Kafka client, after a TLS handshake
    when it has a certificate (a SASL_SSL broker seen from a plaintext client)."""

    def __init__(self, context: ssl.SSLContext | None) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self._context = context
        self.address = f"127.0.0.1:{self._server.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return  # closed
            try:
                if self._context is not None:
                    conn = self._context.wrap_socket(conn, server_side=True)
            except OSError:
                pass  # a plaintext Kafka request is no ClientHello
            finally:
                conn.close()

    def close(self) -> None:
        self._server.close()
        self._thread.join(timeout=5)


@pytest.fixture
def server_tls(tmp_path: Path) -> ssl.SSLContext:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    request = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    subprocess.run(
        [*request, "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def test_a_plaintext_client_at_a_tls_listener_is_told_the_setting_it_misses(
    server_tls: ssl.SSLContext,
) -> None:
    listener = _Listener(server_tls)
    try:
        with pytest.raises(KafkaAccessDenied, match="speaks TLS") as refused:
            check_access(listener.address, timeout_s=10.0)
    finally:
        listener.close()

    assert listener.address in str(refused.value)
    assert "SLOTWISE_KAFKA_SECURITY_PROTOCOL" in str(refused.value)


def test_a_port_that_hangs_up_without_tls_is_no_verdict() -> None:
    listener = _Listener(None)
    try:
        check_access(listener.address, timeout_s=10.0)
    finally:
        listener.close()
