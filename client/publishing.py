"""Publishing a record the way the worker expects it: its topic, its key, its partitioner.

Observations go to the observations topic, candidates and commands to the
candidates topic, keyed by ``subject_id`` and partitioned by librdkafka's
``consistent_random`` (CRC32 of the key) — the worker's partitioner, set
explicitly so no configuration can change it: a subject's writes on two
partitions would lose their order. The producer is idempotent, so a retry
inside the client never duplicates a record on the topic.

A record is checked against the limits the worker applies before it is sent
(text and message size), so the caller hears of it now, not from the
dead-letter topic later. Each carries ``content-type``, ``schema`` and, when
the caller is inside an OpenTelemetry trace (or passes one), ``traceparent``.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaException, Producer

from slotwise.client.exceptions import AccessDenied, InvalidRequest, PublishFailed, Unavailable
from slotwise.sinks.kafka.access import KafkaAccessDenied, check_access, refusal
from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.streams.config import Settings
from slotwise.topics.codec import CONTENT_TYPE, encode_record
from slotwise.topics.records import CandidateFact, Command, Observation
from slotwise.topics.tracing import outgoing

__all__ = ["Published", "Publisher", "Writable"]

Writable = Observation | CandidateFact | Command
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")


@dataclass(frozen=True, slots=True)
class Published:
    """Where the broker put a record."""

    topic: str
    partition: int
    offset: int


class Publisher:
    """One idempotent producer, safe to share between threads."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._catalogue = settings.catalogue()
        self._producer: Producer | None = None
        self._lock = threading.Lock()

    def publish(
        self, record: Writable, *, traceparent: str | None = None, timeout_s: float = 30.0
    ) -> Published:
        """Send one record and wait for the broker's acknowledgement; blocking."""
        topic, value, headers = self._message(record, traceparent)
        producer = self._connected()
        done = threading.Event()
        outcome: dict[str, Any] = {}

        def delivered(err: object, msg: Any) -> None:
            outcome["error"], outcome["message"] = err, msg
            done.set()

        deadline = time.monotonic() + timeout_s
        while True:
            try:
                producer.produce(
                    topic,
                    value=value,
                    key=record.subject_id.encode(),
                    headers=headers,
                    on_delivery=delivered,
                )
                break
            except BufferError:
                producer.poll(0.05)  # the local queue is full: serve reports to make room
            except KafkaException as exc:
                raise PublishFailed(f"kafka refused the record: {exc.args[0]}") from exc
            if time.monotonic() > deadline:
                raise PublishFailed(f"the producer queue stayed full for {timeout_s:g}s")
        while not done.is_set():
            if time.monotonic() > deadline:
                raise PublishFailed(f"not acknowledged by the broker within {timeout_s:g}s")
            producer.poll(0.05)
        denied = refusal(outcome["error"])
        if denied is not None:
            raise AccessDenied(f"{denied} on {topic}", service="kafka")
        if outcome["error"] is not None:
            raise PublishFailed(f"the broker refused the record: {outcome['error']}")
        message = outcome["message"]
        return Published(topic, int(message.partition()), int(message.offset()))

    def close(self, timeout_s: float = 10.0) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            producer.flush(timeout_s)

    def _connected(self) -> Producer:
        with self._lock:
            if self._producer is None:
                try:
                    check_access(self._settings.librdkafka())
                    self._producer = idempotent_producer(
                        self._settings.librdkafka(), partitioner="consistent_random"
                    )
                except KafkaAccessDenied as exc:
                    raise AccessDenied(str(exc), service="kafka") from exc
                except KafkaException as exc:
                    raise Unavailable(f"kafka: {exc.args[0]}", service="kafka") from exc
            return self._producer

    def _message(
        self, record: Writable, traceparent: str | None
    ) -> tuple[str, bytes, list[tuple[str, str | bytes | None]]]:
        if not isinstance(record, Observation | CandidateFact | Command):
            raise InvalidRequest(
                f"publish takes an Observation, CandidateFact or Command, not "
                f"{type(record).__name__}",
                field="record",
            )
        text = getattr(record, "text", None)
        limit = self._settings.max_text_bytes
        if isinstance(text, str) and len(text.encode()) > limit:
            raise InvalidRequest(f"text: over the limit of {limit} bytes", field="text")
        value = encode_record(record)
        if len(value) > self._settings.max_message_bytes:
            raise InvalidRequest(
                f"the record is {len(value)} bytes, over {self._settings.max_message_bytes}"
            )
        topic = (
            self._catalogue.observations
            if isinstance(record, Observation)
            else self._catalogue.candidates
        )
        schema = str(record.model_dump(by_alias=True, include={"schema_"})["schema"])
        headers: list[tuple[str, str | bytes | None]] = [
            ("content-type", CONTENT_TYPE.encode()),
            ("schema", schema.encode()),
        ]
        if traceparent is not None:
            if not _TRACEPARENT.match(traceparent):
                raise InvalidRequest("traceparent: not a W3C traceparent", field="traceparent")
            headers.append(("traceparent", traceparent.encode()))
        else:
            headers += outgoing()
        return topic, value, headers
