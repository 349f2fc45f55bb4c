"""The client's contract without the services: what it refuses, what it costs to import."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from slotwise.client import (
    Client,
    ClientError,
    InvalidRequest,
    Observation,
    Settings,
    SupersessionEvent,
)
from slotwise.client.publishing import Publisher
from slotwise.client.subscription import Subscription

# Nothing listens here: whatever reaches a broker fails, so each refusal below is the client's.
_NOWHERE = Settings(kafka_bootstrap="127.0.0.1:1", redis_url="redis://127.0.0.1:1/0")


def _turn(**fields: object) -> Observation:
    base: dict[str, object] = {
        "observation_id": "o-1",
        "subject_id": "user-42",
        "text": "I start at Stripe on Monday.",
        "observed_at": datetime(2026, 3, 14, 10, tzinfo=UTC),
    }
    return Observation.model_validate({**base, **fields})


def test_publish_refuses_what_the_worker_would_dead_letter() -> None:
    publisher = Publisher(_NOWHERE.model_copy(update={"max_text_bytes": 10}))
    with pytest.raises(InvalidRequest, match="text"):
        publisher.publish(_turn())
    with pytest.raises(InvalidRequest, match="Observation, CandidateFact or Command"):
        publisher.publish(SupersessionEvent.model_construct())  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest, match="traceparent"):
        Publisher(_NOWHERE).publish(_turn(), traceparent="00-not-a-trace")


def test_a_bad_subject_or_time_is_an_invalid_request_not_a_service_error() -> None:
    with Client(_NOWHERE) as memory:
        with pytest.raises(InvalidRequest, match="control characters"):
            memory.facts("a\x00b")
        with pytest.raises(InvalidRequest, match="timezone"):
            memory.facts("user-42", as_of=datetime(2026, 3, 1))  # noqa: DTZ001
        with pytest.raises(InvalidRequest, match="k:"):
            memory.search("user-42", "where", k=0)


def test_an_unreachable_redis_is_unavailable_and_nothing_of_redis_leaks() -> None:
    with Client(_NOWHERE) as memory:
        with pytest.raises(ClientError) as caught:
            memory.facts("user-42")
    assert type(caught.value).__name__ == "Unavailable"
    assert caught.value.service == "redis"  # type: ignore[attr-defined]
    assert type(caught.value).__module__ == "slotwise.client.exceptions"


def test_subscribe_takes_only_topics_with_typed_records() -> None:
    with pytest.raises(InvalidRequest, match="topic"):
        Subscription(_NOWHERE, "deadletter", "g")
    with pytest.raises(InvalidRequest, match="group"):
        Subscription(_NOWHERE, "supersessions", " ")


def test_importing_the_client_loads_no_model_no_milvus_and_no_web_server() -> None:
    script = (
        "import sys, slotwise.client\n"
        "heavy = [m for m in ('torch', 'numpy', 'pymilvus', 'candding', 'fastapi', 'anthropic')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, check=True, env=env, timeout=60
    )
    assert done.stdout.decode().strip() == "[]"
