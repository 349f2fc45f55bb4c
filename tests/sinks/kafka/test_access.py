"""Refused logins and ACLs, recognised for what they are (live: tests/e2e/test_secure.py)."""

from __future__ import annotations

import time

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
