"""Whether a client may reach the brokers at all: a wrong password or CA, said at once.

librdkafka treats a refused login or an untrusted certificate as transient: it
reconnects forever, logs each failure, and the caller sees only a timeout (or
nothing: a consumer polls on). :func:`check_access` connects once, the way
every client of the connection will, and turns the first such failure into
:class:`KafkaAccessDenied` carrying librdkafka's own words ("SASL
authentication error: ... invalid credentials", "certificate verify failed").

An ACL refusal (a topic or group this principal may not use) is another matter:
it names the resource, and :func:`refusal` recognises it in a message's error.
"""

from __future__ import annotations

import logging
import time

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
    probe = Producer(
        client_config(connection, {"error_cb": failures.append, "client.id": "slotwise-probe"}),
        logger=_quiet,
    )
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
                return  # nothing listens: no verdict, the client's own timeouts apply
    finally:
        probe.flush(0)


def refusal(error: KafkaError | None) -> KafkaAccessDenied | None:
    """The access error an ACL refusal is, or None for any other (or no) error."""
    if error is None or error.code() not in _ACL:
        return None
    return KafkaAccessDenied(f"kafka refused: {error.str()} ({error.name()})")
