"""Commands are published with the time they are sent, whatever instant they evaluate at."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import pytest

from slotwise.streams.commands.log import CommandPublisher
from slotwise.streams.config import Settings
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import decode_record
from slotwise.topics.records import Command
from tests.conftest import ConsumerFactory

pytestmark = pytest.mark.kafka


def test_a_pass_evaluated_months_ago_is_not_aged_out_of_the_topic_by_its_timestamp(
    stack: Settings, catalogue: Catalogue, consumer_factory: ConsumerFactory
) -> None:
    # The candidates topic keeps 7 days by record time: a command stamped with its
    # March issued_at would be deleted before a worker read it.
    issued = datetime(2026, 3, 1, tzinfo=UTC)
    command = Command.model_validate(
        {
            "command_id": f"c-{uuid.uuid4().hex[:8]}",
            "subject_id": "user-1",
            "command": "forget",
            "issued_at": issued,
            "as_of": issued,
        }
    )
    settings = stack.model_copy(update={"topic_prefix": catalogue.prefix})
    assert settings.catalogue().candidates == catalogue.candidates
    before_ms = int(time.time() * 1000)
    publisher = CommandPublisher(settings)
    publisher.publish(command)
    publisher.flush()

    consumer = consumer_factory()
    consumer.subscribe([catalogue.candidates])
    deadline = time.monotonic() + 30
    while (message := consumer.poll(1.0)) is None or message.error() is not None:
        assert time.monotonic() < deadline, "the command never arrived"
    _, millis = message.timestamp()
    assert millis >= before_ms - 1000
    assert decode_record(message.value(), key=message.key()) == command
