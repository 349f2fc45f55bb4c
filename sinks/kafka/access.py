"""Whether a client may reach the brokers at all: a wrong password or CA, said at once.

librdkafka treats a refused login or an untrusted certificate as transient: it
reconnects forever, logs each failure, and the caller sees only a timeout (or
nothing: a consumer polls on). :func:`check_access` connects once, the way
every client of the connection will, and turns the first such failure into
:class:`KafkaAccessDenied` carrying librdkafka's own words ("SASL
authentication error: ... invalid credentials", "certificate verify failed").
A plaintext client at a TLS listener never gets as far as a login: the broker
hangs up, which looks like no broker at all, so the probe asks the address for
a TLS handshake and says which setting is missing.

An ACL refusal (a topic or group this principal may not use) is another matter:
it names the resource, and :func:`refusal` recognises it in a message's error.
"""

from __future__ import annotations

import logging
import socket
import ssl
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from slotwise.topics.connection import Connection, client_config
from slotwise.topics.exceptions import SlotwiseError

__all__ = ["KafkaAccessDenied", "check_access", "refusal"]

_LOGIN = {KafkaError._AUTHENTICATION, KafkaError._SSL, KafkaError.SASL_AUTHENTICATION_FAILED}
_ACL = {
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.GROUP_AUTHORIZATION_FAILED,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}
# Each failed login is logged by librdkafka; the exception says it once.
_quiet = logging.getLogger("slotwise.kafka.access")
_quiet.propagate = False
_quiet.addHandler(logging.NullHandler())


class KafkaAccessDenied(SlotwiseError, ConnectionError):
    """The brokers refused this client's login or TLS, or an ACL refused an operation."""


def check_access(connection: Connection, timeout_s: float = 10.0) -> None:
    """Raise :class:`KafkaAccessDenied` on a refused login or certificate; return once the
    brokers answer, or without a verdict once none can be reached or after ``timeout_s``
    (a broker down or still starting: the client's own timeouts and retries apply)."""
    failures: list[KafkaError] = []
    config = client_config(connection, {"error_cb": failures.append, "client.id": "slotwise-probe"})
    probe = Producer(config, logger=_quiet)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            try:
                probe.list_topics(timeout=0.5)
                return
            except KafkaException:
                probe.poll(0)  # serves error_cb
            denied = next((f for f in failures if f.code() in _LOGIN), None)
            if denied is not None:
                raise KafkaAccessDenied(f"kafka refused the connection: {denied.str()}")
            if any(f.code() == KafkaError._ALL_BROKERS_DOWN for f in failures):
                listener = _tls_listener(config)
                if listener is not None:
                    raise KafkaAccessDenied(
                        f"kafka at {listener} speaks TLS and this client connects in "
                        "plaintext: set SLOTWISE_KAFKA_SECURITY_PROTOCOL (SSL or SASL_SSL) "
                        "and SLOTWISE_KAFKA_SSL_CA_LOCATION"
                    )
                return  # nothing listens: no verdict, the client's own timeouts apply
    finally:
        probe.flush(0)


def _tls_listener(config: Mapping[str, Any], timeout_s: float = 2.0) -> str | None:
    """The first bootstrap address that completes a TLS handshake, when ``config``
    connects in plaintext; None otherwise. Only a handshake: nothing is sent."""
    protocol = str(config.get("security.protocol") or "plaintext").lower()
    if protocol not in {"plaintext", "sasl_plaintext"}:
        return None
    context = ssl.create_default_context()
    # Whether the port speaks TLS at all, not whom to trust: no data crosses it.
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    for address in str(config["bootstrap.servers"]).split(","):
        host, _, port = address.strip().rpartition(":")
        try:
            with (
                socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s) as raw,
                context.wrap_socket(raw, server_hostname=host.strip("[]")),
            ):
                return address.strip()
        except (OSError, ValueError):
            continue
    return None


def refusal(error: KafkaError | None) -> KafkaAccessDenied | None:
    """The access error an ACL refusal is, or None for any other (or no) error."""
    if error is None or error.code() not in _ACL:
        return None
    return KafkaAccessDenied(f"kafka refused: {error.str()} ({error.name()})")
