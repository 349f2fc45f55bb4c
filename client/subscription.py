"""Subscribing to a topic of the catalogue: typed records, committed ones only, at least once.

A subscription is a member of the caller's consumer group (``group``), reading
with ``isolation.level=read_committed``, so it sees each event of the worker's
transactions once and never those of an aborted one. Its offsets are committed
in the background, but only for records the caller has finished: a record
counts as finished when the caller asks for the next one (or calls
:meth:`Subscription.commit`). A record handed out and not finished when the
process dies is delivered again — at least once; every record carries a
stable id (``event_id``, ``review_id``, ...) to deduplicate by.

The compacted facts topic also carries tombstones (an erased fact): they come
out as :class:`Tombstone`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from pydantic import BaseModel

from slotwise.client.exceptions import AccessDenied, InvalidRequest, Unavailable, UnreadableRecord
from slotwise.sinks.kafka.access import KafkaAccessDenied, check_access, refusal
from slotwise.streams.config import Settings
from slotwise.topics.codec import decode_record
from slotwise.topics.exceptions import RecordError
from slotwise.topics.records import (
    CandidateFact,
    Command,
    ErasureAttestation,
    Fact,
    Observation,
    Record,
    ReviewItem,
    SupersessionEvent,
)

__all__ = ["TOPICS", "AsyncSubscription", "Subscription", "Tombstone"]

# The topics a subscriber may read, and the records each carries. The dead-letter
# topic holds raw bytes that failed validation: it has no typed records to offer.
TOPICS: dict[str, tuple[type[BaseModel], ...]] = {
    "observations": (Observation,),
    "candidates": (CandidateFact, Command),
    "supersessions": (SupersessionEvent,),
    "facts": (Fact,),
    "review": (ReviewItem,),
    "erasures": (ErasureAttestation,),
}
_KEYED_BY_FACT = frozenset({"facts"})


@dataclass(frozen=True, slots=True)
class Tombstone:
    """A deleted key on the compacted facts topic: the fact was erased."""

    topic: str
    key: str


def _check(topic: str, group: str) -> None:
    if topic not in TOPICS:
        raise InvalidRequest(f"topic {topic!r} is not one of {', '.join(TOPICS)}", field="topic")
    if not group.strip() or len(group) > 249:
        raise InvalidRequest("group: 1 to 249 characters, not blank", field="group")


class Subscription:
    """Blocking iteration over a topic's committed records; close it (or use ``with``)."""

    def __init__(
        self, settings: Settings, topic: str, group: str, *, from_beginning: bool = False
    ) -> None:
        _check(topic, group)
        self.topic = topic
        self._name: str = getattr(settings.catalogue(), topic)
        self._expect = TOPICS[topic]
        self._finished: Message | None = None
        self._handed: Message | None = None
        config = settings.librdkafka(
            {
                "group.id": group,
                "client.id": f"slotwise-client-{uuid.uuid4().hex[:8]}",
                "isolation.level": "read_committed",
                "enable.auto.commit": True,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest" if from_beginning else "latest",
            }
        )
        try:
            check_access(settings.librdkafka())
            self._consumer: Consumer | None = Consumer(config)
            self._consumer.subscribe([self._name])
        except KafkaAccessDenied as exc:
            raise AccessDenied(str(exc), service="kafka") from exc
        except KafkaException as exc:
            raise Unavailable(f"kafka: {exc.args[0]}", service="kafka") from exc

    def __iter__(self) -> Iterator[Record | Tombstone]:
        while True:
            found = self.poll(1.0)
            if found is not None:
                yield found

    def poll(self, timeout_s: float) -> Record | Tombstone | None:
        """The next record, or None after ``timeout_s``; finishes the one handed out before."""
        consumer = self._open()
        self._finish()
        try:
            message = consumer.poll(timeout_s)
        except KafkaException as exc:
            raise Unavailable(f"kafka: {exc.args[0]}", service="kafka") from exc
        if message is None:
            return None
        error = message.error()
        denied = refusal(error)
        if denied is not None:  # polling on would wait forever for records it may not read
            raise AccessDenied(f"{denied} on {self._name}", service="kafka")
        if error is not None:
            if error.fatal():
                raise Unavailable(f"kafka: {error}", service="kafka")
            return None  # transient (a partition's end, a broker moving): keep polling
        self._handed = message
        return self._decode(message)

    def commit(self) -> None:
        """Mark every record handed out so far finished, and commit now."""
        consumer = self._open()
        self._finish()
        if self._finished is not None:
            try:
                consumer.commit(asynchronous=False)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError._NO_OFFSET:
                    raise Unavailable(f"kafka: {exc.args[0]}", service="kafka") from exc

    def close(self) -> None:
        """Leave the group, committing the records finished; the last one handed out is not."""
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _open(self) -> Consumer:
        if self._consumer is None:
            raise InvalidRequest("the subscription is closed")
        return self._consumer

    def _finish(self) -> None:
        handed, self._handed = self._handed, None
        if handed is not None and self._consumer is not None:
            self._consumer.store_offsets(message=handed)
            self._finished = handed

    def _decode(self, message: Message) -> Record | Tombstone:
        key, value = message.key(), message.value()
        raw_key = key.encode() if isinstance(key, str) else key
        if value is None:
            return Tombstone(self.topic, (raw_key or b"").decode("utf-8", "replace"))
        raw = value.encode() if isinstance(value, str) else value
        try:
            return decode_record(
                raw,
                key=None if self.topic in _KEYED_BY_FACT else raw_key or b"",
                expect=self._expect,
            )
        except RecordError as exc:
            where: dict[str, Any] = {
                "topic": self._name,
                "partition": message.partition() or 0,
                "offset": message.offset() or 0,
            }
            raise UnreadableRecord(
                f"{self._name}[{where['partition']}]@{where['offset']}: {exc}", **where
            ) from exc


class AsyncSubscription:
    """The same, as an async iterator: ``async for record in client.subscribe(...)``."""

    def __init__(self, subscription: Subscription) -> None:
        self._sync = subscription
        self.topic = subscription.topic

    def __aiter__(self) -> AsyncIterator[Record | Tombstone]:
        return self._records()

    async def _records(self) -> AsyncIterator[Record | Tombstone]:
        while True:
            found = await self.poll(0.5)
            if found is not None:
                yield found

    async def poll(self, timeout_s: float) -> Record | Tombstone | None:
        return await asyncio.to_thread(self._sync.poll, timeout_s)

    async def commit(self) -> None:
        await asyncio.to_thread(self._sync.commit)

    async def close(self) -> None:
        await asyncio.to_thread(self._sync.close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
