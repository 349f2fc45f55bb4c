"""Where the worker's consumer starts each partition it is given, and which it holds paused.

Left to itself, librdkafka gets two things wrong for a consumer that pauses
partitions for backpressure:

- **A pause outlives its partition's revocation.** The flag lives on the
  partition, not on the assignment: a partition paused when it was revoked is
  still paused when it comes back, and the worker owns it without fetching it,
  for good (its replica leaving made the other one stall on it).
- **A logical start offset is resolved while the partition may be paused.**
  Assigned without an offset, a partition's committed offset (or, with none, the
  log's start) is looked up asynchronously; a pause and a resume around that
  lookup once made a consumer deliver a partition from offset 0 again, after
  later offsets.

So every partition is assigned at an absolute offset read here, and its pause
flag is put in line with the worker's own state on every assignment
(:class:`Pauses`). Both run on the poll thread, inside the rebalance callback.
A partition that delivers an offset already taken is sent back to the next one
not taken (:class:`Redeliveries`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from slotwise.sinks.kafka.publisher import TRANSACTION_TIMEOUT_MS
from slotwise.streams.runtime import metrics
from slotwise.streams.runtime.checkpoint import TP
from slotwise.streams.runtime.errors import ConsumerFailed
from slotwise.streams.runtime.ports import WorkerConsumer

__all__ = ["Pauses", "Redeliveries", "committed_offsets", "keys", "names", "start_offsets"]

log = logging.getLogger(__name__)

# A producer killed inside a transaction holds its offsets from every read_committed
# reader until the broker aborts it: up to the transaction timeout, plus the broker's
# check for timed-out transactions (every 10 s by default), plus margin.
WAIT_S = 2 * TRANSACTION_TIMEOUT_MS / 1000
_ATTEMPT_S = 10.0
_PASSING = frozenset(
    {
        KafkaError._TIMED_OUT,  # what an open transaction's offsets answer, retried inside
        KafkaError._TRANSPORT,
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        # A broker just restarted answers before it has loaded every partition, and the
        # client's metadata lags behind it: the partition is there a moment later.
        KafkaError._UNKNOWN_PARTITION,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        # A broker restarted while the lookup was out: librdkafka replaced its handle to
        # it, and the next attempt goes through the new one.
        KafkaError._DESTROY_BROKER,
    }
)


def committed_offsets(
    consumer: WorkerConsumer, partitions: list[TopicPartition], *, wait_s: float = WAIT_S
) -> dict[TP, int]:
    """The group's committed offset of each partition (negative where it has none).

    An open transaction of a worker that stopped inside it keeps these offsets
    unreadable until the broker aborts it; that is waited out, for ``wait_s``.
    """
    if not partitions:
        return {}
    deadline = time.monotonic() + wait_s
    while True:
        try:
            committed = consumer.committed(partitions, timeout=_ATTEMPT_S)
            return {(tp.topic, tp.partition): tp.offset for tp in committed}
        except KafkaException as exc:
            _wait_or_fail(exc, deadline, "the group's committed offsets")
            log.warning(
                "the committed offsets of %s are not readable yet (%s): waiting (a worker "
                "stopped inside a transaction holds them until the broker aborts it)",
                names(partitions), exc.args[0],
            )  # fmt: skip


def start_offsets(
    consumer: WorkerConsumer, committed: dict[TP, int], *, wait_s: float = WAIT_S
) -> dict[TP, int]:
    """Where each partition starts: its committed offset, or with none, its log's first
    offset (the worker's ``auto.offset.reset`` is ``earliest``) — always absolute."""
    starts: dict[TP, int] = {}
    deadline = time.monotonic() + wait_s
    for tp, offset in committed.items():
        starts[tp] = offset if offset >= 0 else _first_offset(consumer, tp, deadline)
    return starts


def _first_offset(consumer: WorkerConsumer, tp: TP, deadline: float) -> int:
    while True:
        try:
            first, _ = consumer.get_watermark_offsets(
                TopicPartition(*tp), timeout=_ATTEMPT_S, cached=False
            )
            return int(first)
        except KafkaException as exc:
            _wait_or_fail(exc, deadline, f"the first offset of {tp[0]}[{tp[1]}]")


def _wait_or_fail(exc: KafkaException, deadline: float, what: str) -> None:
    error: KafkaError = exc.args[0]
    if not (error.retriable() or error.code() in _PASSING) or time.monotonic() > deadline:
        raise ConsumerFailed(f"could not read {what}: {error}") from exc
    time.sleep(0.5)


class Pauses:
    """The partitions the worker paused, kept by the worker.

    ``held`` are the partitions paused and not resumed since, including ones revoked
    meanwhile: librdkafka still holds those paused, so one assigned again is resumed
    here unless the worker is paused as a whole.
    """

    def __init__(self) -> None:
        self.on = False  # the worker's backpressure: every owned partition paused
        self.held: set[TP] = set()

    def set(self, consumer: WorkerConsumer, pause: bool) -> None:
        """Pause every owned partition, or resume the ones this paused."""
        owned = consumer.assignment()
        if pause:
            consumer.pause(owned)
            self.held |= keys(owned)
        else:
            paused = [tp for tp in owned if (tp.topic, tp.partition) in self.held]
            if paused:
                consumer.resume(paused)
            self.held -= keys(paused)
        self.on = pause

    def assigned(self, consumer: WorkerConsumer, partitions: list[TopicPartition]) -> None:
        """Give newly assigned partitions the worker's pause state."""
        if self.on:
            consumer.pause(partitions)
            self.held |= keys(partitions)
            return
        stale = [tp for tp in partitions if (tp.topic, tp.partition) in self.held]
        if stale:
            consumer.resume(stale)
            self.held -= keys(stale)


def keys(partitions: Iterable[TopicPartition]) -> set[TP]:
    """The partitions as the worker's ledgers key them."""
    return {(tp.topic, tp.partition) for tp in partitions}


def names(partitions: list[TopicPartition]) -> str:
    """The partitions as a log line names them."""
    return ", ".join(f"{tp.topic}[{tp.partition}]" for tp in partitions)


class Redeliveries:
    """Partitions that delivered an offset already taken, and where each fetches from next
    (``offsets.PartitionLedger.track``): noted on the event loop, sought by the next poll,
    on the poll thread that alone touches the consumer."""

    def __init__(self) -> None:
        self._seeks: dict[TP, int] = {}

    def note(self, tp: TP, offset: int, next_offset: int) -> None:
        """``offset`` came again: it is dropped, and ``tp`` goes back to ``next_offset``."""
        metrics.REDELIVERED.labels(tp[0], str(tp[1])).inc()
        if tp not in self._seeks:
            log.warning(
                "%s[%d] delivered offset %d again, after %d; fetching it from %d",
                tp[0], tp[1], offset, next_offset - 1, next_offset,
            )  # fmt: skip
        self._seeks[tp] = next_offset

    def seek(self, consumer: WorkerConsumer) -> None:
        if not self._seeks:
            return
        seeks, self._seeks = self._seeks, {}
        owned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
        for (topic, partition), offset in seeks.items():
            if (topic, partition) not in owned:
                continue
            try:
                consumer.seek(TopicPartition(topic, partition, offset))
            except KafkaException as exc:
                # Nothing is lost: the offsets it delivers again are dropped one by one.
                log.warning("seeking %s[%d] to %d failed: %s", topic, partition, offset, exc)
