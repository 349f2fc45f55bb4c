"""The worker: a transactional consume → process → produce loop with key-ordered concurrency.

One confluent-kafka consumer (cooperative-sticky, ``read_committed``) feeds a
:class:`KeyedScheduler`: candidates and commands of one subject run one at a
time in offset order, different subjects concurrently, observations (stateless
extraction) fully concurrently. Finished events wait in a per-partition
:class:`PartitionLedger` until every lower offset is finished; then their
outputs and the offset after them are committed together in one Kafka
transaction. A crash anywhere replays from the last committed offset, and the
write path's stored outputs make the replay re-emit exactly what was lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Coroutine, Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from sinks.kafka_publisher import PublisherFenced, TransactionAborted, TransactionalPublisher
from streams import clock, metrics
from streams.consumed import Consumed
from streams.deadletter import dead_letter
from streams.health import Health
from streams.llm import CircuitOpen, ModelError
from streams.offsets import PartitionLedger, Release
from streams.scheduling import KeyedScheduler
from streams.settings import GroupProtocol
from streams.transient import is_transient
from streams.write_path import WritePath
from topics.catalogue import Catalogue
from topics.codec import decode_record
from topics.exceptions import RecordError
from topics.outbound import Outbound
from topics.records import CandidateFact, Command, Observation, Record

__all__ = ["ConsumerFailed", "Worker", "WorkerConfig"]

log = logging.getLogger(__name__)

TP = tuple[str, int]
_MAX_ATTEMPTS = 5  # for errors that are not transient: then the record is dead-lettered
_BROKER_PROBE_S = 5.0
# Under the broker's and the producer's ~1 MB message limit, or the dead letter
# itself could never be published and every commit would stall behind it.
_DEADLETTER_VALUE_BYTES = 512 * 1024
_MODEL_ATTEMPTS = 3  # model calls that failed their whole budget, while others succeed
_STUCK_AFTER_S = 60.0  # an event holding its partition's commits this long is reported
_RETRY_LOG_EVERY = 20  # transient retries of one record between two warnings
_LAG_EVERY_S = 1.0


class ConsumerFailed(RuntimeError):
    """The consumer hit a fatal error (say, fenced by a replica with its instance id):
    it will never fetch again, so the worker stops rather than idle as a zombie."""


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    bootstrap: str
    group_id: str
    transactional_id: str
    max_in_flight: int = 1000
    commit_interval_s: float = 0.2
    max_message_bytes: int = 1024 * 1024
    max_text_bytes: int = 64 * 1024
    shutdown_timeout_s: float = 30.0
    group_instance_id: str | None = None
    group_protocol: GroupProtocol = "classic"
    session_timeout_ms: int = 15_000  # the classic protocol's; the broker's otherwise


class Worker:
    def __init__(
        self,
        config: WorkerConfig,
        catalogue: Catalogue,
        write_path: WritePath,
        *,
        health: Health,
    ) -> None:
        self._config = config
        self._catalogue = catalogue
        self._write = write_path
        self._health = health
        self._scheduler = KeyedScheduler()
        self._ledgers: dict[TP, PartitionLedger] = {}
        self._unpublished: list[tuple[TP, Release]] = []
        # Per partition: the lowest unfinished offset, since when, and whether it was reported.
        self._oldest: dict[TP, tuple[int, float, bool]] = {}
        self._commit_lock = asyncio.Lock()
        self._paused = False  # written on the poll thread only
        self._committed: dict[TP, int] = {}  # last committed offset per owned partition
        self._lag_exported_at = 0.0
        self._extracted_at = 0.0
        self._group_metadata: object = None
        self._poll_thread = ThreadPoolExecutor(1, thread_name_prefix="slotwise-poll")
        self._commit_thread = ThreadPoolExecutor(1, thread_name_prefix="slotwise-commit")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._consumer = Consumer(
            {
                "bootstrap.servers": config.bootstrap,
                "group.id": config.group_id,
                **_group_protocol(config),
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "fetch.max.bytes": 16 * 1024 * 1024,
            }
        )
        # A commit on a healthy broker takes milliseconds; failing after 10 s lets an
        # outage show on /healthz quickly, and the same batch is simply retried.
        self._publisher = TransactionalPublisher(
            config.bootstrap, config.transactional_id, catalogue, timeout_s=10.0
        )

    # ---------------------------------------------------------------- running

    async def run(self, stop: asyncio.Event) -> None:
        """Consume until ``stop`` is set, then drain, commit and close."""
        self._loop = asyncio.get_running_loop()
        await self._in_thread(self._commit_thread, self._publisher.init)
        await self._in_thread(self._poll_thread, self._subscribe)
        self._health.started()
        committer = asyncio.create_task(self._commit_loop(stop), name="slotwise-commit")
        watcher = asyncio.create_task(self._watch_broker(stop), name="slotwise-broker-watch")
        try:
            while not stop.is_set() and not committer.done():
                messages = await self._in_thread(self._poll_thread, self._poll, self._wants_pause())
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

    def _poll(self, pause: bool) -> list[Message]:
        """Pause or resume, fetch once, and read what the commits need; rebalance
        callbacks run inside the fetch."""
        if pause != self._paused:
            self._pause(pause)
        messages = self._consumer.consume(500, 0.1)
        self._group_metadata = self._consumer.consumer_group_metadata()
        self._export_lag()
        return messages

    def _pause(self, pause: bool) -> None:
        assignment = self._consumer.assignment()
        if pause:
            self._consumer.pause(assignment)
        else:
            self._consumer.resume(assignment)
        self._paused = pause

    def _export_lag(self) -> None:
        now = time.monotonic()
        if now - self._lag_exported_at < _LAG_EVERY_S:
            return
        self._lag_exported_at = now
        for (topic, partition), offset in self._committed.copy().items():
            _, high = self._consumer.get_watermark_offsets(
                TopicPartition(topic, partition), cached=True
            )
            if high >= 0:
                metrics.LAG.labels(topic, str(partition)).set(max(0, high - offset))

    def _wants_pause(self) -> bool:
        """Backpressure: stop fetching at the in-flight bound, resume below 80 % of it."""
        pending = self._scheduler.pending
        if pending >= self._config.max_in_flight:
            return True
        if pending < self._config.max_in_flight * 0.8:
            return False
        return self._paused

    async def _shutdown(self, committer: asyncio.Task[None]) -> None:
        """Stop fetching, drain in-flight events, commit, close; a fenced publisher still closes."""
        try:
            await self._in_thread(self._poll_thread, self._pause, True)
            if not await self._scheduler.drain(timeout=self._config.shutdown_timeout_s):
                log.warning("shutdown: in-flight events did not finish; they will be replayed")
            committer.cancel()
            try:
                await committer
            except asyncio.CancelledError:
                pass
            await self._commit()
        finally:
            await self._scheduler.cancel(self._scheduler.keys())
            await self._in_thread(self._poll_thread, self._consumer.close)
            await self._in_thread(self._commit_thread, self._publisher.close)
            self._poll_thread.shutdown()
            self._commit_thread.shutdown()

    async def _in_thread(self, pool: ThreadPoolExecutor, fn: Callable[..., Any], *args: Any) -> Any:
        assert self._loop is not None
        return await self._loop.run_in_executor(pool, fn, *args)

    # ------------------------------------------------------------ dispatching

    def _dispatch(self, message: Message) -> None:
        error = message.error()
        if error is not None:
            if error.fatal() or error.code() == KafkaError._FATAL:
                raise ConsumerFailed(f"the consumer failed: {error}")
            if error.code() != KafkaError._PARTITION_EOF:
                log.warning("consumer error: %s", error)
            return
        consumed = Consumed.of(message)
        topic, partition, offset = consumed.topic, consumed.partition, consumed.offset
        ledger = self._ledgers.get(consumed.tp)
        if ledger is None:
            # Fetched before its partition was revoked in the same poll: the new owner
            # consumes it from the committed offset.
            return
        ledger.track(offset)
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
        clock.event_time(consumed.timestamp)
        outputs = await self._with_retries(consumed, record)
        if self._ledgers.get(consumed.tp) is ledger:  # not revoked meanwhile
            ledger.complete(consumed.offset, outputs)
            metrics.EVENTS_APPLIED.labels(type(record).__name__).inc()

    async def _with_retries(self, message: Consumed, record: Record) -> tuple[Outbound, ...]:
        attempt, transient_attempt = 0, 0
        began = time.monotonic()
        while True:
            try:
                outputs = await self._handle(record)
                self._health.ok("write-path")
                self._health.ok("model")
                if isinstance(record, Observation):
                    self._extracted_at = time.monotonic()
                return outputs
            except asyncio.CancelledError:
                raise
            except ModelError as exc:
                if not is_transient(exc):
                    # The model answered, but unusably for this record: park it.
                    return (self._dead_letter(message, f"model_{exc.kind}", str(exc), None),)
                if not isinstance(exc, CircuitOpen):
                    attempt += 1
                if attempt >= _MODEL_ATTEMPTS and self._extracted_at > began:
                    # Other turns were extracted meanwhile: this turn fails, not the provider.
                    return (self._dead_letter(message, "model_unavailable", str(exc), None),)
                transient_attempt += 1
                self._health.failing("model", f"{type(exc).__name__}: {exc}")
                await asyncio.sleep(_backoff(transient_attempt))
            except Exception as exc:
                if is_transient(exc):
                    # A dependency is down: block this subject, report, and wait for it.
                    if transient_attempt % _RETRY_LOG_EVERY == 0:
                        log.warning(
                            "%s[%d]@%d: %s: %s; retrying",
                            message.topic,
                            message.partition,
                            message.offset,
                            type(exc).__name__,
                            exc,
                        )
                    transient_attempt += 1
                    self._health.failing("write-path", f"{type(exc).__name__}: {exc}")
                    metrics.RETRIES.labels(type(record).__name__).inc()
                    await asyncio.sleep(_backoff(transient_attempt))
                    continue
                attempt += 1
                if attempt >= _MAX_ATTEMPTS:
                    log.exception("giving up on %s@%s", message.topic, message.offset)
                    return (self._dead_letter(message, "processing_failed", repr(exc), None),)
                await asyncio.sleep(_backoff(attempt))

    async def _handle(self, record: Record) -> tuple[Outbound, ...]:
        if isinstance(record, Observation):
            return await self._write.on_observation(record)
        if isinstance(record, CandidateFact):
            return await self._write.on_candidate(record)
        if isinstance(record, Command):
            return await self._write.on_command(record)
        raise TypeError(f"unexpected record {type(record).__name__}")

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

    # -------------------------------------------------------------- committing

    async def _commit_loop(self, stop: asyncio.Event) -> None:
        failures = 0
        while not stop.is_set():
            await asyncio.sleep(
                self._config.commit_interval_s if not failures else _backoff(failures)
            )
            self._report_stuck()
            try:
                await self._commit()
                failures = 0
            except PublisherFenced as exc:
                if exc.by_another:
                    raise
                # The batch was not committed; a new producer publishes it again.
                failures += 1
                log.warning("transactional producer failed (%s); starting a new one", exc)
                self._health.failing("kafka", exc)
                try:
                    await self._in_thread(self._commit_thread, self._publisher.renew)
                except Exception as renew_exc:
                    log.warning("could not start a new producer yet: %s", renew_exc)
            except Exception as exc:
                failures += 1
                log.warning("commit failed (%s); retrying with the same batch", exc)

    def _report_stuck(self) -> None:
        """Warn once about an event that has held its partition's commits for a minute.

        Key-ordered processing lets a partition's other subjects run on, so a stuck
        event shows only as commits that stop: this names it.
        """
        now = time.monotonic()
        for tp, ledger in self._ledgers.items():
            offset = ledger.lowest_unfinished
            seen = self._oldest.get(tp)
            if offset is None:
                self._oldest.pop(tp, None)
                metrics.OLDEST_UNFINISHED.labels(tp[0], str(tp[1])).set(0)
                continue
            if seen is None or seen[0] != offset:
                seen = self._oldest[tp] = (offset, now, False)
            age = now - seen[1]
            metrics.OLDEST_UNFINISHED.labels(tp[0], str(tp[1])).set(age)
            if age >= _STUCK_AFTER_S and not seen[2]:
                self._oldest[tp] = (offset, seen[1], True)
                log.warning(
                    "%s[%d]@%d has been running for %.0f s; %d later events wait to commit",
                    tp[0],
                    tp[1],
                    offset,
                    age,
                    ledger.held - 1,
                )
        for tp in [tp for tp in self._oldest if tp not in self._ledgers]:
            del self._oldest[tp]
            with contextlib.suppress(KeyError):
                metrics.OLDEST_UNFINISHED.remove(tp[0], str(tp[1]))

    async def _watch_broker(self, stop: asyncio.Event) -> None:
        """Ask the broker for metadata every few seconds and report the answer on /healthz.

        An idle worker commits nothing, and a busy one can wait a minute in a
        transaction call, so neither would notice soon that the broker is gone.
        """
        while not stop.is_set():
            try:
                # Through the producer: a consumer call would wait out a rebalance callback.
                await asyncio.to_thread(
                    self._publisher.probe, self._catalogue.candidates, _BROKER_PROBE_S
                )
                self._health.ok("kafka-broker")
            except KafkaException as exc:
                self._health.failing("kafka-broker", exc)
            await asyncio.sleep(_BROKER_PROBE_S)

    async def _commit(self) -> None:
        async with self._commit_lock:
            for tp, ledger in self._ledgers.items():
                release = ledger.release()
                if release is not None:
                    self._unpublished.append((tp, release))
                metrics.IN_FLIGHT.labels(tp[0], str(tp[1])).set(ledger.held)
            if not self._unpublished:
                return
            batch = list(self._unpublished)
            try:
                # Vectors first: an offset is never committed before its rows are searchable.
                await self._write.index.flush()
                self._health.ok("milvus")
            except Exception as exc:
                self._health.failing("milvus", exc)
                raise
            messages = [m for _, release in batch for m in release.messages]
            offsets: dict[TP, int] = {}
            for tp, release in batch:
                offsets[tp] = release.next_offset
            partitions = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
            started = time.perf_counter()
            try:
                await self._in_thread(
                    self._commit_thread,
                    self._publisher.commit,
                    messages,
                    partitions,
                    self._group_metadata,
                )
            except TransactionAborted as exc:
                metrics.COMMIT_FAILURES.labels("aborted").inc()
                self._health.failing("kafka", exc)
                raise
            self._health.ok("kafka")
            del self._unpublished[: len(batch)]
            metrics.COMMITS.inc()
            metrics.LAST_COMMIT.set_to_current_time()
            metrics.STAGE_SECONDS.labels("commit").observe(time.perf_counter() - started)
            self._committed.update(offsets)

    # ------------------------------------------------------- rebalance (poll thread)

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if partitions:
            log.info("assigned %s", _names(partitions))
        self._on_loop(self._take_partitions({(tp.topic, tp.partition) for tp in partitions}))
        if self._paused:
            consumer.pause(partitions)

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if partitions:
            log.info("revoked %s", _names(partitions))
        self._on_loop(self._release_partitions({(tp.topic, tp.partition) for tp in partitions}))

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if partitions:
            log.warning("lost %s", _names(partitions))
        self._on_loop(self._release_partitions({(tp.topic, tp.partition) for tp in partitions}))

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

    async def _take_partitions(self, new: set[TP]) -> None:
        for tp in new:
            self._ledgers[tp] = PartitionLedger()

    async def _release_partitions(self, gone: set[TP]) -> None:
        """Forget departing partitions: their unfinished and uncommitted events are replayed
        by the new owner, whose replays re-emit the stored outputs.

        Nothing is committed here. A transaction's offset commit made during a rebalance
        is refused (a stale generation or member epoch), and one landing after the
        partitions moved would publish their outputs twice. This returns only once a commit already
        under way is over and the partitions are out of every later one.
        """
        if not gone:
            return
        keys = [k for k in self._scheduler.keys() if isinstance(k, tuple) and k[:2] in gone]
        await self._scheduler.cancel(keys)
        async with self._commit_lock:
            self._unpublished = [(tp, r) for tp, r in self._unpublished if tp not in gone]
            for tp in gone:
                self._ledgers.pop(tp, None)
                self._committed.pop(tp, None)
                with contextlib.suppress(KeyError):  # never exported
                    metrics.LAG.remove(tp[0], str(tp[1]))


def _group_protocol(config: WorkerConfig) -> dict[str, Any]:
    if config.group_protocol == "consumer":
        # KIP-848: the broker assigns, incrementally, and the range assignor gives a
        # replica the same partition numbers of both topics, so each topic spreads
        # evenly. Cooperative-sticky balances counts only: with two replicas, one took
        # every observations partition and the other every candidates partition.
        # No static membership: such a broker refuses a static member restarted while
        # its crashed predecessor's session lasts (UNRELEASED_INSTANCE_ID, fatal to the
        # consumer), so a crash restart would wait out that session all the same.
        return {"group.protocol": "consumer", "group.remote.assignor": "range"}
    return {
        "group.protocol": "classic",
        "partition.assignment.strategy": "cooperative-sticky",
        "session.timeout.ms": config.session_timeout_ms,
        # A static member restarted under the same name takes its partitions back at
        # once, instead of the group waiting for the dead session.
        **({"group.instance.id": config.group_instance_id} if config.group_instance_id else {}),
    }


def _names(partitions: list[TopicPartition]) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}]" for tp in partitions)


_EXPECT: dict[bool, tuple[type[Any], ...]] = {
    True: (Observation,),
    False: (CandidateFact, Command),
}


def _backoff(attempt: int, base: float = 0.1, cap: float = 5.0) -> float:
    return random.uniform(0, min(cap, base * 2**attempt))
