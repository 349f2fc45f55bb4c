"""What the worker uses of its Kafka clients, as types it can be handed.

confluent-kafka's ``Consumer`` and ``Message`` and the transactional publisher
(``sinks/kafka/publisher.py``) satisfy these, and so do the in-memory ones of
``streams/runtime/testing.py``: the worker's replay, dispatch, redelivery and
rebalance logic runs the same against either. Only the calls the worker and
``positions.py`` make are named here; adding a call to the worker means adding
it here, and to the in-memory clients. The wiring builds the clients through
:class:`WorkerClients` (``streams/wiring/kafka_clients.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from confluent_kafka import KafkaError, TopicPartition

from slotwise.streams.runtime.checkpoint import Publisher

__all__ = ["Fetched", "ProbingPublisher", "RebalanceCallback", "WorkerClients", "WorkerConsumer"]

# (confluent's type alias names ``Consumer`` as the first argument.)
RebalanceCallback = Callable[[Any, list[TopicPartition]], None]


class Fetched(Protocol):
    """One fetched message, or a consumer error delivered in its place."""

    def error(self) -> KafkaError | None: ...

    def topic(self) -> str | None: ...

    def partition(self) -> int | None: ...

    def offset(self) -> int | None: ...

    def key(self) -> bytes | None: ...

    def value(self) -> bytes | None: ...

    def headers(self) -> Any: ...

    def timestamp(self) -> tuple[int, int]: ...


class WorkerConsumer(Protocol):
    """The consumer calls the worker makes, all from its poll thread."""

    def subscribe(
        self,
        topics: list[str],
        on_assign: RebalanceCallback | None = ...,
        on_revoke: RebalanceCallback | None = ...,
        on_lost: RebalanceCallback | None = ...,
    ) -> None: ...

    def consume(self, num_messages: int = ..., timeout: float = ...) -> Sequence[Fetched]: ...

    def assignment(self) -> list[TopicPartition]: ...

    def incremental_assign(self, partitions: list[TopicPartition]) -> None: ...

    def seek(self, partition: TopicPartition) -> None: ...

    def pause(self, partitions: list[TopicPartition]) -> None: ...

    def resume(self, partitions: list[TopicPartition]) -> None: ...

    def committed(
        self, partitions: list[TopicPartition], timeout: float = ...
    ) -> list[TopicPartition]: ...

    def get_watermark_offsets(
        self, partition: TopicPartition, timeout: float = ..., cached: bool = ...
    ) -> tuple[int, int]: ...

    def consumer_group_metadata(self) -> Any: ...

    def close(self) -> None: ...


class ProbingPublisher(Publisher, Protocol):
    """The publisher also answers the broker probe (``watch.watch_broker``)."""

    def probe(self, topic: str, timeout_s: float) -> object: ...


@dataclass(frozen=True, slots=True)
class WorkerClients:
    """How a worker's clients are made: its consumer, given its static-membership name
    (or None), and its publisher, given its transactional id."""

    consumer: Callable[[str | None], WorkerConsumer]
    publisher: Callable[[str], ProbingPublisher]
