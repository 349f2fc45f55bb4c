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
from slotwise.streams.runtime.errors import ConsumerFailed
from slotwise.streams.runtime.health import Health
from slotwise.streams.runtime.intake import Intake
from slotwise.streams.runtime.offsets import PartitionLedger
from slotwise.streams.runtime.ports import Fetched, ProbingPublisher, WorkerConsumer
from slotwise.streams.runtime.positions import Pauses, Redeliveries, keys, names
from slotwise.streams.runtime.recovery import (
    Recovery,
    StoreMarks,
    StoreServer,
    SubjectHeal,
    Takeover,
)
from slotwise.streams.runtime.rejoin import RejoinWatch
from slotwise.streams.runtime.retry import Classifier, GiveUp, RetryPolicy
from slotwise.streams.runtime.scheduling import KeyedScheduler
from slotwise.streams.runtime.watch import LagGauge, StuckEvents, watch_broker
from slotwise.topics import tracing
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import CandidateFact, Command, Observation, Record

__all__ = ["RecordProcessor", "Worker", "WorkerConfig"]

log = logging.getLogger(__name__)


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
    # How long a consumer whose partitions were lost may go unassigned before it is
    # replaced (``rejoin.py``).
    rejoin_timeout_s: float = 60.0


class Worker:
    def __init__(
        self,
        config: WorkerConfig,
        catalogue: Catalogue,
        write_path: RecordProcessor,
        *,
        consumer: WorkerConsumer,
        replace_consumer: Callable[[], WorkerConsumer] | None = None,
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
        self._replace_consumer = replace_consumer
        self._rejoin = RejoinWatch(config.rejoin_timeout_s)
        self._intake = Intake(
            catalogue.observations, config.max_message_bytes, config.max_text_bytes
        )
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
        self._redeliveries = Redeliveries()
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
                if self._replace_consumer is not None and self._rejoin.overdue:
                    await self._on_poll_thread(self._new_consumer)
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

    def _new_consumer(self) -> None:
        """Close the consumer that lost its partitions and never rejoined, and subscribe
        a new one: it joins under the same instance id and is assigned them again, from
        the last commit, like any new owner."""
        assert self._replace_consumer is not None
        out_s = self._rejoin.out_for_s
        log.warning("no partitions for %.0f s since they were lost: a new consumer", out_s)
        self._health.failing("kafka-group", f"partitions lost {out_s:.0f} s ago, not back")
        try:
            self._consumer.close()
        except KafkaException as exc:
            log.warning("closing the stalled consumer failed: %s", exc)
        self._consumer = self._replace_consumer()
        self._pauses = Pauses()
        self._rejoin.replaced()
        self._subscribe()

    def _poll(self, pause: bool) -> Sequence[Fetched]:
        """Pause or resume, fetch once, and read what the commits need; rebalance
        callbacks run inside the fetch."""
        self._redeliveries.seek(self._consumer)
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
            self._redeliveries.note(consumed.tp, offset, ledger.next_offset)
            return
        metrics.EVENTS_IN.labels(topic).inc()
        metrics.IN_FLIGHT.labels(topic, str(partition)).set(ledger.held)
        record = self._intake.read(consumed)
        if isinstance(record, Outbound):
            ledger.complete(offset, (record,))  # a dead letter in the record's place
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
                result = (self._intake.dead_letter(consumed, result.reason, result.message, None),)
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

    # ------------------------------------------------------- rebalance (poll thread)

    def _on_assign(self, consumer: WorkerConsumer, partitions: list[TopicPartition]) -> None:
        if self._rejoin.assigned():
            self._health.ok("kafka-group")
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
        takeover = self._recovery.retake(self._consumer, wanted)
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
            self._rejoin.lost()
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
