"""The worker: a transactional consume → process → produce loop with key-ordered concurrency.

One confluent-kafka consumer (``read_committed``) feeds a :class:`KeyedScheduler`:
candidates and commands of one subject run one at a time in offset order,
different subjects concurrently, observations (stateless extraction) fully
concurrently. Finished events wait in their partition's ledger until every
lower offset is finished; the :class:`~slotwise.streams.runtime.checkpoint.Checkpoint`
then flushes the sinks and commits their outputs with the offset after them in
one Kafka transaction. A crash anywhere replays from the last committed offset,
and the write path's stored outputs make the replay re-emit exactly what was lost.

The worker's parts: the checkpoint (``checkpoint.py``), its recovery from a store
gone behind (``recovery.py``), the retry policy and its classifier (``retry.py``,
``failures.py``), what it reports about itself (``watch.py``). Its consumer,
publisher and sinks are built by the wiring (``app.py``, ``kafka_clients.py``)
and handed in: in tests, the in-memory ones of ``testing.py``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from slotwise.streams.runtime import clock, metrics
from slotwise.streams.runtime.checkpoint import TP, Checkpoint, Sink
from slotwise.streams.runtime.consumed import Consumed
from slotwise.streams.runtime.deadletter import dead_letter
from slotwise.streams.runtime.errors import ConsumerFailed
from slotwise.streams.runtime.health import Health
from slotwise.streams.runtime.offsets import PartitionLedger
from slotwise.streams.runtime.ports import Fetched, ProbingPublisher, WorkerConsumer
from slotwise.streams.runtime.positions import Pauses, keys, names
from slotwise.streams.runtime.recovery import (
    Recovery,
    StoreMarks,
    StoreServer,
    SubjectHeal,
    Takeover,
)
from slotwise.streams.runtime.retry import Classifier, GiveUp, RetryPolicy
from slotwise.streams.runtime.scheduling import KeyedScheduler
from slotwise.streams.runtime.watch import LagGauge, StuckEvents, watch_broker
from slotwise.topics import tracing
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import decode_record
from slotwise.topics.exceptions import RecordError
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import CandidateFact, Command, Observation, Record

__all__ = ["RecordProcessor", "Worker", "WorkerConfig"]

log = logging.getLogger(__name__)

# Under the broker's and the producer's ~1 MB message limit, or the dead letter
# itself could never be published and every commit would stall behind it.
_DEADLETTER_VALUE_BYTES = 512 * 1024


class RecordProcessor(Protocol):
    """What the worker runs each record through (the write path, wired in ``wiring/``)."""

    async def on_observation(self, observation: Observation) -> tuple[Outbound, ...]: ...

    async def on_candidate(self, candidate: CandidateFact) -> tuple[Outbound, ...]: ...

    async def on_command(self, command: Command) -> tuple[Outbound, ...]: ...


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    max_in_flight: int = 1000
    commit_interval_s: float = 0.2
    max_message_bytes: int = 1024 * 1024
    max_text_bytes: int = 64 * 1024
    shutdown_timeout_s: float = 30.0


class Worker:
    def __init__(
        self,
        config: WorkerConfig,
        catalogue: Catalogue,
        write_path: RecordProcessor,
        *,
        consumer: WorkerConsumer,
        publisher: ProbingPublisher,
        sinks: Mapping[str, Sink],
        classify: Classifier,
        health: Health,
        marks: StoreMarks | None = None,
        server: StoreServer | None = None,
        heal: SubjectHeal | None = None,
    ) -> None:
        self._config = config
        self._catalogue = catalogue
        self._write = write_path
        self._consumer = consumer
        self._publisher = publisher
        self._health = health
        self._scheduler = KeyedScheduler()
        self._retry = RetryPolicy(classify, health)
        self._recovery = Recovery(catalogue.candidates, marks=marks, server=server, heal=heal)
        self._checkpoint = Checkpoint(
            publisher,
            sinks,
            health,
            self._recovery,
            group_metadata=lambda: self._group_metadata,
            interval_s=config.commit_interval_s,
            marks=marks,
        )
        self._stuck = StuckEvents()
        self._lag = LagGauge()
        self._pauses = Pauses()  # changed on the poll thread only
        # Written on the event loop between two polls, read by the next one.
        self._seeks: dict[TP, int] = {}
        # What a rebalance callback failed with, for the poll to raise: raised inside the
        # callback, confluent-kafka hands it on as a non-exception that kills the thread.
        self._assign_failed: Exception | None = None
        self._group_metadata: object = None
        self._poll_thread = ThreadPoolExecutor(1, thread_name_prefix="slotwise-poll")
        self._loop: asyncio.AbstractEventLoop | None = None

    # ---------------------------------------------------------------- running

    async def run(self, stop: asyncio.Event) -> None:
        """Consume until ``stop`` is set, then drain, commit and close."""
        self._loop = asyncio.get_running_loop()
        self._recovery.start(self._loop)
        await self._checkpoint.start()
        await self._on_poll_thread(self._subscribe)
        self._health.started()
        committer = asyncio.create_task(
            self._checkpoint.run(stop, lambda: self._stuck.report(self._checkpoint.ledgers)),
            name="slotwise-commit",
        )
        watcher = asyncio.create_task(
            watch_broker(self._publisher.probe, self._catalogue.candidates, self._health, stop),
            name="slotwise-broker-watch",
        )
        try:
            while not stop.is_set() and not committer.done():
                if self._recovery.rewind_due:
                    await self._rewind()
                messages = await self._on_poll_thread(self._poll, self._wants_pause())
                for message in messages:
                    self._dispatch(message)
        finally:
            watcher.cancel()
            await self._shutdown(committer)

    # The consumer is touched only on the poll thread. While a rebalance callback
    # runs there (and waits for the event loop), a consumer call from any other
    # thread blocks until the callback returns: made from the event loop, it
    # would deadlock the worker and leave the moving partitions unowned.

    def _subscribe(self) -> None:
        self._consumer.subscribe(
            [self._catalogue.observations, self._catalogue.candidates],
            on_assign=self._on_assign,
            on_revoke=self._on_revoke,
            on_lost=self._on_lost,
        )

    def _poll(self, pause: bool) -> Sequence[Fetched]:
        """Pause or resume, fetch once, and read what the commits need; rebalance
        callbacks run inside the fetch."""
        self._seek_redelivered()
        if pause != self._pauses.on:
            self._pause(pause)
        messages = self._consumer.consume(500, 0.1)
        if self._assign_failed is not None:
            raise ConsumerFailed(
                f"taking partitions failed: {self._assign_failed}"
            ) from self._assign_failed
        self._group_metadata = self._consumer.consumer_group_metadata()
        self._lag.export(self._consumer, self._checkpoint.committed)
        return messages

    def _pause(self, pause: bool) -> None:
        self._pauses.set(self._consumer, pause)

    def _seek_redelivered(self) -> None:
        """Send partitions that delivered taken offsets again back to their next one."""
        if not self._seeks:
            return
        seeks, self._seeks = self._seeks, {}
        owned = {(tp.topic, tp.partition) for tp in self._consumer.assignment()}
        for (topic, partition), offset in seeks.items():
            if (topic, partition) not in owned:
                continue
            try:
                self._consumer.seek(TopicPartition(topic, partition, offset))
            except KafkaException as exc:
                # Nothing is lost: the offsets it delivers again are dropped one by one.
                log.warning("seeking %s[%d] to %d failed: %s", topic, partition, offset, exc)

    def _wants_pause(self) -> bool:
        """Backpressure: stop fetching at the in-flight bound, resume below 80 % of it."""
        pending = self._scheduler.pending
        if pending >= self._config.max_in_flight:
            return True
        if pending < self._config.max_in_flight * 0.8:
            return False
        return self._pauses.on

    async def _shutdown(self, committer: asyncio.Task[None]) -> None:
        """Stop fetching, drain in-flight events, commit, close; a fenced publisher still closes."""
        try:
            await self._on_poll_thread(self._pause, True)
            if not await self._scheduler.drain(timeout=self._config.shutdown_timeout_s):
                log.warning("shutdown: in-flight events did not finish; they will be replayed")
            committer.cancel()
            try:
                await committer
            except asyncio.CancelledError:
                pass
            await self._checkpoint.commit()
        finally:
            await self._scheduler.cancel(self._scheduler.keys())
            await self._on_poll_thread(self._consumer.close)
            await self._checkpoint.close()
            self._poll_thread.shutdown()

    async def _on_poll_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        assert self._loop is not None
        return await self._loop.run_in_executor(self._poll_thread, fn, *args)

    # ------------------------------------------------------------ dispatching

    def _dispatch(self, message: Fetched) -> None:
        error = message.error()
        if error is not None:
            if error.fatal() or error.code() == KafkaError._FATAL:
                raise ConsumerFailed(f"the consumer failed: {error}")
            if error.code() != KafkaError._PARTITION_EOF:
                log.warning("consumer error: %s", error)
            return
        consumed = Consumed.of(message)
        topic, partition, offset = consumed.topic, consumed.partition, consumed.offset
        ledger = self._checkpoint.ledgers.get(consumed.tp)
        if ledger is None:
            # Fetched before its partition was revoked in the same poll: the new owner
            # consumes it from the committed offset.
            return
        if not ledger.track(offset):
            self._redelivered(consumed.tp, offset, ledger.next_offset)
            return
        metrics.EVENTS_IN.labels(topic).inc()
        metrics.IN_FLIGHT.labels(topic, str(partition)).set(ledger.held)
        try:
            record = decode_record(
                consumed.value,
                # A keyless record has no subject partition: it must not pass unchecked.
                key=consumed.key if consumed.key is not None else b"",
                expect=_EXPECT[topic == self._catalogue.observations],
                max_message_bytes=self._config.max_message_bytes,
                max_text_bytes=self._config.max_text_bytes,
            )
        except RecordError as exc:
            ledger.complete(
                offset, (self._dead_letter(consumed, exc.reason, exc.message, exc.field),)
            )
            return
        key: Hashable = (
            (topic, partition, "offset", offset)
            if isinstance(record, Observation)
            else (topic, partition, record.subject_id)
        )
        self._scheduler.submit(key, lambda: self._process(ledger, consumed, record))

    async def _process(self, ledger: PartitionLedger, consumed: Consumed, record: Record) -> None:
        clock.event_time(record.issued_at if isinstance(record, Command) else consumed.timestamp)
        with tracing.record_span(f"slotwise {type(record).__name__}", consumed.headers):
            result = await self._retry.run(
                lambda: self._handle(consumed.tp, consumed.offset, record),
                where=f"{consumed.topic}[{consumed.partition}]@{consumed.offset}",
                kind=type(record).__name__,
                # A turn extracted means the model provider answers (retry.py).
                marks_progress=isinstance(record, Observation),
            )
            if isinstance(result, GiveUp):
                result = (self._dead_letter(consumed, result.reason, result.message, None),)
            result = tracing.carry(result)
        if self._checkpoint.ledgers.get(consumed.tp) is ledger:  # not revoked meanwhile
            ledger.complete(consumed.offset, result)
            metrics.EVENTS_APPLIED.labels(type(record).__name__).inc()

    async def _handle(self, tp: TP, offset: int, record: Record) -> tuple[Outbound, ...]:
        if isinstance(record, Observation):
            return await self._write.on_observation(record)
        await self._recovery.heal_before(tp, offset, record.subject_id)
        if isinstance(record, CandidateFact):
            return await self._write.on_candidate(record)
        if isinstance(record, Command):
            return await self._write.on_command(record)
        raise TypeError(f"unexpected record {type(record).__name__}")

    def _redelivered(self, tp: TP, offset: int, next_offset: int) -> None:
        """An offset taken before came again: it is dropped, and the partition sent back
        to the next offset not taken (``offsets.PartitionLedger.track``)."""
        metrics.REDELIVERED.labels(tp[0], str(tp[1])).inc()
        if tp not in self._seeks:
            log.warning(
                "%s[%d] delivered offset %d again, after %d; fetching it from %d",
                tp[0], tp[1], offset, next_offset - 1, next_offset,
            )  # fmt: skip
        self._seeks[tp] = next_offset

    def _dead_letter(
        self, message: Consumed, reason: str, text: str, field: str | None
    ) -> Outbound:
        metrics.DEADLETTERS.labels(reason).inc()
        return dead_letter(
            key=message.key,
            value=message.value,
            headers=message.headers,
            topic=message.topic,
            partition=message.partition,
            offset=message.offset,
            reason=reason,
            message=text,
            field=field,
            at=clock.now(),
            max_value_bytes=min(self._config.max_message_bytes, _DEADLETTER_VALUE_BYTES),
        )

    # ------------------------------------------------------- rebalance (poll thread)

    def _on_assign(self, consumer: WorkerConsumer, partitions: list[TopicPartition]) -> None:
        try:
            self._assign(consumer, partitions)
        except Exception as exc:
            log.error("taking %s failed: %s", names(partitions), exc)
            self._assign_failed = exc

    def _assign(self, consumer: WorkerConsumer, partitions: list[TopicPartition]) -> None:
        """Take the partitions, each from the absolute offset the recovery gives."""
        if not partitions:
            return
        log.info("assigned %s", names(partitions))
        takeover = self._recovery.takeover(consumer, partitions)
        self._on_loop(self._take_partitions(takeover))
        consumer.incremental_assign(
            [TopicPartition(t, p, o) for (t, p), o in takeover.starts.items()]
        )
        self._pauses.assigned(consumer, partitions)

    async def _rewind(self) -> None:
        """Take the partitions a change of store server handed back (``recovery.py``)
        again, as a rebalance would: their in-flight events cancelled, the consumer back
        at each one's last commit, or at the store's mark where that is lower."""
        again = self._recovery.rewinding
        keys = [k for k in self._scheduler.keys() if isinstance(k, tuple) and k[:2] in again]
        await self._scheduler.cancel(keys)
        self._recovery.rewound()
        if again:
            takeover = await self._on_poll_thread(self._seek_back, again)
            await self._take_partitions(takeover)

    def _seek_back(self, partitions: set[TP]) -> Takeover:
        """Seek ``partitions`` to their last commit (or the store's lower mark)."""
        wanted = [TopicPartition(t, p) for t, p in sorted(partitions)]
        takeover = self._recovery.takeover(self._consumer, wanted, replaced=True)
        for (topic, partition), start in takeover.starts.items():
            self._consumer.seek(TopicPartition(topic, partition, start))
        log.warning("replaying %s from their last commit", names(wanted))
        return takeover

    def _on_revoke(self, consumer: WorkerConsumer, partitions: list[TopicPartition]) -> None:
        if partitions:
            log.info("revoked %s", names(partitions))
        self._on_loop(self._release_partitions(keys(partitions)))

    def _on_lost(self, consumer: WorkerConsumer, partitions: list[TopicPartition]) -> None:
        if partitions:
            log.warning("lost %s", names(partitions))
        self._on_loop(self._release_partitions(keys(partitions)))

    def _on_loop(self, change: Coroutine[Any, Any, None]) -> None:
        """Run a change of ownership on the event loop and wait for it.

        The ledgers and the scheduler belong to the loop; a callback that changed them
        from the poll thread could do so in the middle of a commit.
        """
        if self._loop is None:
            change.close()
            return
        try:
            asyncio.run_coroutine_threadsafe(change, self._loop).result()
        except Exception:
            log.exception("changing partition ownership failed")

    async def _take_partitions(self, takeover: Takeover) -> None:
        taken = set(takeover.starts)
        self._recovery.take(taken, takeover.quiet_below)
        self._checkpoint.take(taken, quiet_below=takeover.quiet_below, starts=takeover.starts)

    async def _release_partitions(self, gone: set[TP]) -> None:
        """Cancel the departing partitions' events, then drop them from the checkpoint:
        their unfinished and uncommitted events are replayed by the new owner, whose
        replays re-emit the stored outputs."""
        if not gone:
            return
        keys = [k for k in self._scheduler.keys() if isinstance(k, tuple) and k[:2] in gone]
        await self._scheduler.cancel(keys)
        await self._checkpoint.release(gone)
        self._recovery.release(gone)


_EXPECT: dict[bool, tuple[type[Any], ...]] = {
    True: (Observation,),
    False: (CandidateFact, Command),
}
