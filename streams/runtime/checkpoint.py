"""The checkpoint: what the worker has finished becomes durable, all of it or none.

Each commit, in this order:

1. **release the ledgers** — per partition, the outputs of every finished event
   below the lowest unfinished offset, and the offset after them
   (:class:`~slotwise.streams.runtime.offsets.PartitionLedger`), and record those offsets
   in the store (``sinks.redis_commits``: how a store gone behind is recognised);
2. **flush the sinks** — the vector rows those events wrote become searchable;
   a failed flush aborts the commit (nothing is published, the same batch is
   tried again), so an offset is never committed before what it depends on;
3. **check the store is the one the events were applied to** — if the Redis
   server behind the store changed since the last commit (a failover, a
   restart: ``sinks.redis_identity``), or a mark of step 1 was found below the
   one recorded before (and so not overwritten), an event finished before the
   change may have been applied to a server that lost it. Nothing is committed then: every
   owned partition is handed to the worker's recovery to replay from its last
   commit (``streams/runtime/recovery.py``), and the replays that find their apply
   re-emit its stored outputs; up to where the partition had been taken, each
   subject's vector rows are first put back in line with the new server
   (``streams/runtime/index_heal.py``);
4. **commit the transaction** — the released outputs and offsets in one Kafka
   transaction (KIP-447, fenced by the group's metadata). A partition replaying
   below what was committed before (its ledger's ``quiet_below``) publishes
   nothing and commits no offset until it is past it: only its store mark moves,
   so a crash meanwhile resumes the replay where the store is.

A batch that failed to commit stays queued and is retried as it was; a commit
refused for a replay (step 3) answers False, and is no failure. Partitions
leaving the worker drop out of every later commit (:meth:`Checkpoint.release`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from confluent_kafka import TopicPartition

from slotwise.sinks.kafka.publisher import PublisherFenced, TransactionAborted
from slotwise.streams.runtime import metrics
from slotwise.streams.runtime.health import Health
from slotwise.streams.runtime.offsets import PartitionLedger, Release
from slotwise.streams.runtime.retry import backoff
from slotwise.topics.outbound import Outbound

__all__ = ["TP", "Checkpoint", "Marks", "Publisher", "Sink", "StoreWatch"]

log = logging.getLogger(__name__)

TP = tuple[str, int]
_PROBE_EVERY_S = 1.0


class Sink(Protocol):
    """Anything the committed events wrote that must be durable before their offsets."""

    async def flush(self) -> None: ...


class Publisher(Protocol):
    """The transactional producer (``sinks.kafka_publisher.TransactionalPublisher``)."""

    def init(self) -> None: ...

    def renew(self) -> None: ...

    def close(self) -> None: ...

    def commit(
        self,
        messages: Sequence[Outbound],
        offsets: Sequence[TopicPartition],
        group_metadata: object,
    ) -> None: ...


class Marks(Protocol):
    """Where the store records the offsets each commit covers (``sinks.redis_commits``):
    nothing, and the partitions, where a stored mark fell below ``last``."""

    async def record(
        self, offsets: Mapping[TP, int], last: Mapping[TP, int] | None = None
    ) -> set[TP]: ...

    async def probe(self) -> None: ...


class StoreWatch(Protocol):
    """What the checkpoint asks the worker's recovery (``streams/runtime/recovery.py``)."""

    def server_changed(self) -> bool: ...

    def replay_all(self, ledgers: Mapping[TP, PartitionLedger], why: str) -> None: ...


class Checkpoint:
    def __init__(
        self,
        publisher: Publisher,
        sinks: Mapping[str, Sink],
        health: Health,
        store: StoreWatch,
        *,
        group_metadata: Callable[[], object],
        interval_s: float = 0.2,
        marks: Marks | None = None,
    ) -> None:
        self._marks = marks
        self._store = store
        self._marked: dict[TP, int] = {}  # the last mark recorded per owned partition
        self._probed_at = 0.0
        self._publisher = publisher
        self._sinks = dict(sinks)  # by the name /healthz reports a failed flush under
        self._health = health
        self._group_metadata = group_metadata
        self._interval_s = interval_s
        self._ledgers: dict[TP, PartitionLedger] = {}
        self._unpublished: list[tuple[TP, Release]] = []
        self._committed: dict[TP, int] = {}  # the last committed offset per owned partition
        self._lock = asyncio.Lock()
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="slotwise-commit")

    @property
    def ledgers(self) -> dict[TP, PartitionLedger]:
        return self._ledgers

    @property
    def committed(self) -> dict[TP, int]:
        return self._committed

    async def start(self) -> None:
        """Fence older instances of this replica's transactional id."""
        await self._in_thread(self._publisher.init)

    async def close(self) -> None:
        try:
            await self._in_thread(self._publisher.close)
        finally:
            self._thread.shutdown()

    # -- ownership (on the event loop) ----------------------------------------

    def take(
        self,
        partitions: set[TP],
        quiet_below: Mapping[TP, int] | None = None,
        starts: Mapping[TP, int] | None = None,
    ) -> None:
        """Own ``partitions``, consumed from ``starts``; below ``quiet_below`` a replayed
        event publishes nothing."""
        for tp in partitions:
            self._ledgers[tp] = PartitionLedger(
                start=(starts or {}).get(tp, 0), quiet_below=(quiet_below or {}).get(tp, 0)
            )

    async def release(self, partitions: set[TP]) -> None:
        """Forget departing partitions once a commit already under way is over.

        Nothing is committed for them here: a transaction's offset commit during
        a rebalance is refused (a stale generation or member epoch), and one
        landing after the partitions moved would publish their outputs twice.
        Their new owner replays what was not committed.
        """
        async with self._lock:
            self._unpublished = [(tp, r) for tp, r in self._unpublished if tp not in partitions]
            for tp in partitions:
                self._ledgers.pop(tp, None)
                self._committed.pop(tp, None)
                self._marked.pop(tp, None)
                with contextlib.suppress(KeyError):  # never exported
                    metrics.LAG.remove(tp[0], str(tp[1]))

    # -- committing -------------------------------------------------------------

    async def run(self, stop: asyncio.Event, every: Callable[[], None] = lambda: None) -> None:
        """Commit every interval until ``stop``; ``every`` runs before each commit.

        A producer that failed fatally (say, in a broker restart) is replaced by a
        new one of the same transactional id; one fenced by another instance of
        this replica ends the worker.
        """
        failures = 0
        while not stop.is_set():
            await asyncio.sleep(self._interval_s if not failures else backoff(failures))
            every()
            try:
                await self.commit()  # refused for a replay, it is no failure either
                failures = 0
            except PublisherFenced as exc:
                if exc.by_another:
                    raise
                failures += 1
                log.warning("transactional producer failed (%s); starting a new one", exc)
                self._health.failing("kafka", exc)
                try:
                    await self._in_thread(self._publisher.renew)
                except Exception as renew_exc:
                    log.warning("could not start a new producer yet: %s", renew_exc)
            except Exception as exc:
                failures += 1
                log.warning("commit failed (%s); retrying with the same batch", exc)

    async def commit(self) -> bool:
        """Commit what the ledgers release; False when refused, every owned partition
        handed back for a replay (step 3 of the module's docstring)."""
        async with self._lock:
            if self._server_changed():
                # Also with nothing to commit: the applies wait, fenced, for the replay.
                return self._replay_all("the Redis server changed")
            for tp, ledger in self._ledgers.items():
                release = ledger.release()
                if release is not None:
                    self._unpublished.append((tp, release))
                metrics.IN_FLIGHT.labels(tp[0], str(tp[1])).set(ledger.held)
            if not self._unpublished:
                return await self._probe_store()
            batch = list(self._unpublished)
            messages = [m for _, release in batch for m in release.messages]
            offsets = {tp: release.next_offset for tp, release in batch}
            if self._marks is not None:
                # Written after the batch's applies and before the sinks' flush (WAIT).
                try:
                    behind = await self._marks.record(offsets, self._marked)
                except Exception as exc:
                    self._health.failing("redis", exc)
                    raise
                self._health.ok("redis")
                if behind:
                    return self._replay_all(
                        f"the store's commit marks of {len(behind)} partitions went back"
                    )
                self._marked.update(offsets)
            await self._flush_sinks()
            if self._server_changed():
                return self._replay_all("the Redis server changed")
            # A replay below the partition's earlier commit moves only the store's mark.
            ahead = {tp: o for tp, o in offsets.items() if o >= self._ledgers[tp].quiet_below}
            partitions = [TopicPartition(t, p, o) for (t, p), o in ahead.items()]
            started = time.perf_counter()
            if messages or partitions:
                try:
                    await self._in_thread(
                        self._publisher.commit, messages, partitions, self._group_metadata()
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
            self._committed.update(ahead)
            return True

    async def _probe_store(self) -> bool:
        """With nothing to commit, ask the store once a second: a Redis that restarted
        behind under an idle worker is noticed (and healed) without waiting for traffic."""
        if self._marks is None or time.monotonic() - self._probed_at < _PROBE_EVERY_S:
            return True
        self._probed_at = time.monotonic()
        try:
            await self._marks.probe()
        except Exception as exc:
            self._health.failing("redis", exc)
            raise
        self._health.ok("redis")
        if self._server_changed():
            return self._replay_all("the Redis server changed")
        return True

    def _server_changed(self) -> bool:
        return self._store.server_changed()

    def _replay_all(self, why: str) -> bool:
        """Refuse the commit and hand every owned partition to the recovery for a replay
        from its last commit (step 3 of the module's docstring): False, the answer."""
        self._store.replay_all(self._ledgers, why)
        self._ledgers.clear()
        self._unpublished.clear()
        self._marked.clear()
        return False

    async def _flush_sinks(self) -> None:
        for name, sink in self._sinks.items():
            try:
                await sink.flush()
            except Exception as exc:
                self._health.failing(name, exc)
                raise
            self._health.ok(name)

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)
