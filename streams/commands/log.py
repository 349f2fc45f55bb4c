"""Publishing commands onto the subjects' ordered log (the candidates topic).

The background jobs and the review CLI change a subject only by publishing a
``command/1`` keyed by the subject, with the partitioner every producer of
the topic uses (librdkafka's default), so the command lands on the subject's
partition and is ordered with its writes. The worker's clock for a command
is its ``issued_at`` (``streams/runtime/clock.py``), so the facts a command writes
carry that instant as ``recorded_at``, and a pass run again with the same
``--as-of`` writes byte-identical state. Its Kafka timestamp is the time it
was published: the topic's retention counts from there, so a pass evaluated
at an instant older than the retention is not deleted before a worker reads it.
"""

from __future__ import annotations

from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.streams.config import Settings
from slotwise.topics.codec import CONTENT_TYPE, encode_record
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Command

__all__ = ["CommandPublisher", "NotDelivered"]


class NotDelivered(SlotwiseError, RuntimeError):
    """Kafka did not acknowledge every command (the broker is down, or refused them)."""


class CommandPublisher:
    """An idempotent producer of commands; :meth:`flush` raises if any was not delivered."""

    def __init__(self, settings: Settings) -> None:
        self._producer = idempotent_producer(settings.librdkafka())
        self._topic = settings.catalogue().candidates
        self._failures: list[str] = []
        self.sent = 0

    def publish(self, command: Command) -> None:
        def delivered(err: object, _msg: object) -> None:
            if err is not None:
                self._failures.append(str(err))

        self._producer.produce(
            self._topic,
            key=command.subject_id.encode(),
            value=encode_record(command),
            headers=[("content-type", CONTENT_TYPE.encode()), ("schema", b"command/1")],
            on_delivery=delivered,
        )
        self._producer.poll(0)
        self.sent += 1

    def flush(self, timeout_s: float = 30.0) -> None:
        remaining = self._producer.flush(timeout_s)
        if remaining or self._failures:
            failures, self._failures = self._failures, []
            raise NotDelivered(
                f"{remaining + len(failures)} command(s) not delivered: {failures[:3]}"
            )
