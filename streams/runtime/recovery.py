"""Recovery: where each partition the worker owns is consumed from, and what it heals.

A store (Redis) can lose writes whose Kafka transactions committed: a restart
from an AOF short of its last second, a failover to a replica that lagged. Two
moments find that out, and this object answers for both, with one state:

- **taking partitions** (a rebalance, on the poll thread): each partition starts
  at its committed offset or, where the store's commit mark
  (``sinks/redis/commits.py``) is lower, at the mark; the events between are
  replayed, and below the committed offset publish nothing (``quiet_below``);
- **the store's server changing under the worker** (seen by the checkpoint):
  every owned partition is handed back (:meth:`Recovery.replay_all`), its
  in-flight events cancelled, and taken again from its last commit
  (:meth:`Recovery.rewind_due`, :meth:`Recovery.rewound`).

Either way an event replayed where the store may have lost it first has its
subject's vector rows put back in line with the store
(:meth:`Recovery.heal_before`; ``index_heal.py``), once per subject and replay.

The consumer is touched on the poll thread only; what the store answers is read
on the event loop, whose retries wait there (``asyncio.sleep``) while the poll
thread waits for the answer inside the rebalance callback, as it must.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from confluent_kafka import TopicPartition

from slotwise.sinks.exceptions import StoreUnavailable
from slotwise.streams.runtime import metrics
from slotwise.streams.runtime.checkpoint import TP, Marks
from slotwise.streams.runtime.offsets import PartitionLedger
from slotwise.streams.runtime.ports import WorkerConsumer
from slotwise.streams.runtime.positions import committed_offsets, names, start_offsets
from slotwise.streams.runtime.retry import backoff

__all__ = ["Recovery", "StoreMarks", "StoreServer", "SubjectHeal", "Takeover"]

log = logging.getLogger(__name__)

# Why partitions are taken: a group assignment, or the store's server changing under
# a worker that already owned them.
_Why = Literal["assigned", "server replaced"]

_MARK_ATTEMPTS = 8
_T = TypeVar("_T")

# Puts a subject's vector rows back in line with the store before a healing replay of
# its events decides anything (streams/runtime/index_heal.py).
SubjectHeal = Callable[[str], Awaitable[object]]


class StoreServer(Protocol):
    """The Redis server the store reaches (``sinks/redis/identity.py``)."""

    generation: int

    def accept(self) -> None: ...


class StoreMarks(Marks, Protocol):
    """The store's commit marks, read as well as recorded (``sinks/redis/commits.py``)."""

    async def known(self) -> bool: ...

    async def read(self, partitions: Iterable[TP]) -> dict[TP, int]: ...


@dataclass(frozen=True, slots=True)
class Takeover:
    """Where taken partitions are consumed from, and below which a replayed event
    publishes nothing (it was committed before, its outputs published)."""

    starts: Mapping[TP, int]
    quiet_below: Mapping[TP, int]


@dataclass(slots=True)
class _Owned:
    """What recovery knows of one owned partition."""

    # Offsets below it ran before against a store that may have lost them.
    replays_below: int
    # Offsets below it were applied to a server since replaced: the bound a further
    # change of server heals up to, with every offset taken since.
    heal_below: int
    # Subjects whose rows were healed in this replay: once each, before their first event.
    healed: set[str] = field(default_factory=set)


class Recovery:
    def __init__(
        self,
        candidates: str,
        *,
        marks: StoreMarks | None = None,
        server: StoreServer | None = None,
        heal: SubjectHeal | None = None,
        pause_s: Callable[[int], float] = backoff,
    ) -> None:
        self._candidates = candidates  # the topic whose partitions the store marks
        self._marks = marks
        self._server = server
        self._heal = heal
        self._pause_s = pause_s  # between reads of the marks, by attempt
        self._generation = server.generation if server is not None else 0
        self._owned: dict[TP, _Owned] = {}
        # Partitions handed back by a change of server, with the bound their replay heals
        # below, until taken again.
        self._rewinding: dict[TP, int] = {}
        self._rewind_due = False  # also with no partition owned: the server is to be accepted
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Applies go to the server answering now (``sinks/redis/identity.py``)."""
        self._loop = loop
        if self._server is not None:
            self._server.accept()

    # -- taking partitions (poll thread) --------------------------------------

    def takeover(self, consumer: WorkerConsumer, partitions: list[TopicPartition]) -> Takeover:
        """Where each assigned partition is consumed from (``positions.py``): its last
        commit, or the store's mark where that is lower."""
        return self._take(consumer, partitions, "assigned")

    def retake(self, consumer: WorkerConsumer, partitions: list[TopicPartition]) -> Takeover:
        """The same for partitions this worker owns, after the store's server changed
        under it: it had recorded a mark for every one, so a missing mark was lost."""
        return self._take(consumer, partitions, "server replaced")

    def _take(
        self, consumer: WorkerConsumer, partitions: list[TopicPartition], why: _Why
    ) -> Takeover:
        committed = committed_offsets(consumer, partitions)
        behind = self._behind(consumer, committed, why)
        starts = start_offsets(consumer, committed)
        starts.update({tp: mark for tp, (mark, _) in behind.items()})
        return Takeover(starts=starts, quiet_below={tp: c for tp, (_, c) in behind.items()})

    def _behind(
        self, consumer: WorkerConsumer, committed: Mapping[TP, int], why: _Why
    ) -> dict[TP, tuple[int, int]]:
        """Candidates partitions whose store lacks committed events: (its mark, committed).

        Those events are replayed from the mark: the ones whose apply survived re-emit
        their stored outputs, the lost ones are decided again (the clock is the log), and
        nothing below the committed offset is published twice (``PartitionLedger``).

        A partition with no mark is new to the store (a new deployment, one from before
        the marks, a store rebuilt from the facts topic), unless the store holds marks of
        the group's other partitions or its server was replaced under this worker:
        then the partition's first mark was lost with the writes after it, and it is
        replayed from its log's start.
        """
        candidates = {tp: offset for tp, offset in committed.items() if tp[0] == self._candidates}
        marks_port = self._marks
        if marks_port is None or self._loop is None or not candidates:
            return {}
        marks, known = self._on_loop(self._read_marks(set(candidates)))
        lost = [tp for tp, o in candidates.items() if tp not in marks and o > 0]
        firsts: dict[TP, int] = {}
        if lost and (known or why == "server replaced"):
            # start_offsets gives a partition without a commit its log's first offset.
            starts = start_offsets(consumer, dict.fromkeys(lost, -1))
            firsts = {tp: first for tp, first in starts.items() if first < candidates[tp]}
            marks.update(firsts)
        if firsts:
            other_marks = "holds the group's other marks"
            log.warning(
                "the store lacks the commit marks of %s though it %s: their first marks "
                "were lost with the writes after them; replaying from the log's start",
                names([TopicPartition(*tp) for tp in sorted(firsts)]),
                "had its server replaced" if why == "server replaced" else other_marks,
            )  # fmt: skip
        behind: dict[TP, tuple[int, int]] = {}
        baseline: dict[TP, int] = {}
        for tp, offset in candidates.items():
            mark = marks.get(tp)
            if mark is None:
                # The first time this store sees the partition: it is taken to hold what
                # was committed so far.
                baseline[tp] = max(offset, 0)
            elif mark < offset:
                behind[tp] = (mark, offset)
                metrics.REPLAYED.labels(tp[0], str(tp[1])).inc(offset - mark)
                log.warning(
                    "the store is behind the committed log on %s[%d]: it holds offsets up "
                    "to %d, %d were committed; replaying %d events",
                    tp[0], tp[1], mark, offset, offset - mark,
                )  # fmt: skip
        if baseline:
            self._on_loop(marks_port.record(baseline))
        return behind

    async def _read_marks(self, partitions: set[TP]) -> tuple[dict[TP, int], bool]:
        """The store's marks, and whether it holds any of the group's: an outage is waited
        out, as without them a partition cannot be known to be whole (one past the budget
        fails the assignment loudly)."""
        marks = self._marks
        assert marks is not None
        attempt = 1
        while True:
            try:
                return await marks.read(partitions), await marks.known()
            except StoreUnavailable as exc:
                if attempt == _MARK_ATTEMPTS:
                    raise
                log.warning("reading the store's commit marks failed (%s); retrying", exc)
                await asyncio.sleep(self._pause_s(attempt))
                attempt += 1

    def _on_loop(self, work: Coroutine[Any, Any, _T]) -> _T:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    # -- ownership (event loop) ------------------------------------------------

    def take(self, partitions: Iterable[TP], quiet_below: Mapping[TP, int]) -> None:
        """Own ``partitions``: a rewound one heals below the bound it was handed back with."""
        for tp in partitions:
            heal_below = self._rewinding.pop(tp, 0)
            self._owned[tp] = _Owned(
                replays_below=max(quiet_below.get(tp, 0), heal_below), heal_below=heal_below
            )

    def release(self, partitions: Iterable[TP]) -> None:
        for tp in partitions:
            self._owned.pop(tp, None)
            self._rewinding.pop(tp, None)

    def replays(self, tp: TP, offset: int) -> bool:
        """Whether the event at ``offset`` ran before against a store that may have lost
        it: committed before (a replay healing a store gone behind the log), or applied
        before the store's server changed (a failover under uncommitted events)."""
        owned = self._owned.get(tp)
        return owned is not None and offset < owned.replays_below

    async def heal_before(self, tp: TP, offset: int, subject_id: str) -> None:
        """Before the first event of ``subject_id`` in a replay that heals the store: the
        index still holds what the lost events wrote (``index_heal.py``)."""
        owned = self._owned.get(tp)
        if (
            self._heal is None
            or owned is None
            or offset >= owned.replays_below
            or subject_id in owned.healed
        ):
            return
        await self._heal(subject_id)
        owned.healed.add(subject_id)

    # -- a change of store server (event loop) ----------------------------------

    def server_changed(self) -> bool:
        """Whether the store reaches another server than the one last accepted."""
        return self._server is not None and self._server.generation != self._generation

    def replay_all(self, ledgers: Mapping[TP, PartitionLedger], why: str) -> None:
        """Hand every owned partition back for a replay from its last commit: everything
        taken so far may have written vector rows of applies the new server lacks, so the
        replay heals each subject's rows up to there before its first event decides."""
        if self._server is not None:
            self._generation = self._server.generation
        for tp, ledger in ledgers.items():
            owned = self._owned.pop(tp, None)
            self._rewinding[tp] = max(owned.heal_below if owned else 0, ledger.next_offset)
        self._rewind_due = True
        metrics.STORE_REWINDS.inc()
        log.warning(
            "%s under %d partitions' uncommitted events; replaying them from their last commit",
            why,
            len(ledgers),
        )

    @property
    def rewind_due(self) -> bool:
        """A change of store server awaits the worker's :meth:`rewound`, even if it found
        no partition to hand back: the worker still has to accept the new server."""
        return self._rewind_due or bool(self._rewinding)

    @property
    def rewinding(self) -> set[TP]:
        """The partitions handed back, for the worker to take again from their last commit."""
        return set(self._rewinding)

    def rewound(self) -> None:
        """The handed-back partitions' events are cancelled: applies go to the new server."""
        if self._server is not None:
            self._server.accept()  # nothing of the old server's time still runs
        self._rewind_due = False
