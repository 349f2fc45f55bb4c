"""Reads counted as accesses: when each fact was last read, and how often, in Redis.

Forgetting scores a fact by the time since it was last used, so
every read through slotwise records an access of each fact it returned. The
two numbers are commutative — a maximum and a counter — so they need no
ordering with the subject's writes and bypass its write log and version: two
keys per subject, same hash tag as ``RedisStore``'s::

    <prefix>:{<subject>}:access_at  zset  fact_id, score = last read (epoch ms), ZADD GT
    <prefix>:{<subject>}:access_n   hash  fact_id → reads (HINCRBY)

A read only adds to an in-process buffer (:class:`AccessHook`: a dict update
per fact it returned); the buffer is written every 100 ms, one Lua call per
subject in one pipelined round trip, never awaited by a read. A failure to
record is logged and counted, never raised into a read; a crash loses at most
the last interval's accesses (statistics, not state). Because these keys change
outside the log, a forget pass reads them once and stores its decision with
its outputs: a replay re-emits the decision instead of scoring again.

Erasing facts must drop their entries here too (:meth:`RedisAccess.drop`);
``keys.ACCESS_KINDS`` names the keys for a whole-subject erase.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime

from prometheus_client import Counter

from slotwise.processors.forgetting import Access
from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import ACCESS_KINDS
from slotwise.sinks.redis.replies import as_bytes
from slotwise.sinks.redis.scripts import lua_script
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Fact

__all__ = ["ACCESSES", "AccessHook", "RedisAccess"]

log = logging.getLogger(__name__)

ACCESSES = Counter(
    "slotwise_fact_accesses_total",
    "Facts returned by reads, by whether recording the access succeeded",
    ["outcome"],
)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class RedisAccess:
    """The access counters of every subject, on the store's client and key names."""

    def __init__(self, store: RedisStore) -> None:
        self._store = store
        self._redis = store.client
        self._script = self._redis.register_script(lua_script("access.lua"))

    def _keys(self, subject_id: str) -> list[str]:
        return [self._store.key(subject_id, kind) for kind in ACCESS_KINDS]

    async def record(self, subject_id: str, fact_ids: Sequence[str], at: datetime) -> None:
        """One read of ``fact_ids`` at ``at``: last access raised to ``at``, count + 1."""
        await self.record_many({subject_id: dict.fromkeys(fact_ids, (1, at))})

    async def record_many(self, reads: Mapping[str, Mapping[str, tuple[int, datetime]]]) -> None:
        """``subject → fact_id → (reads, last read)``, every subject in one round trip."""
        batches = [(s, facts) for s, facts in reads.items() if facts]
        if not batches:
            return
        with translated("recording accesses"):
            async with self._redis.pipeline(transaction=False) as pipe:
                for subject_id, facts in batches:
                    args: list[str | int] = []
                    for fact_id, (count, at) in facts.items():
                        args += [fact_id, count, int(at.timestamp() * 1000)]
                    await self._script(keys=self._keys(subject_id), args=args, client=pipe)
                await pipe.execute()

    async def touch(self, subject_id: str, fact_ids: Sequence[str], at: datetime) -> None:
        """Raise the last access of ``fact_ids`` to ``at`` without counting a read (a restore:
        idempotent, so a replay of the command changes nothing)."""
        await self.record_many({subject_id: dict.fromkeys(fact_ids, (0, at))})

    async def read(self, subject_id: str) -> dict[str, Access]:
        """Every recorded access of the subject's facts, by fact id."""
        at_key, count_key = self._keys(subject_id)
        with translated("reading accesses"):
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.zrange(at_key, 0, -1, withscores=True)
                pipe.hgetall(count_key)
                stamps, counts = await pipe.execute()
        last = {as_bytes(m).decode(): datetime.fromtimestamp(s / 1000, UTC) for m, s in stamps}
        count = {as_bytes(k).decode(): int(v) for k, v in counts.items()}
        return {f: Access(count.get(f, 0), last.get(f)) for f in last.keys() | count.keys()}

    async def drop(self, subject_id: str, fact_ids: Iterable[str]) -> None:
        """Forget the accesses of erased facts."""
        ids = list(fact_ids)
        if not ids:
            return
        at_key, count_key = self._keys(subject_id)
        with translated("dropping accesses"):
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.zrem(at_key, *ids)
                pipe.hdel(count_key, *ids)
                await pipe.execute()


class AccessHook:
    """The read side's access hook (``streams.reads.AccessRecorder``), fire and forget.

    Called with the facts a read returned, it adds them to a buffer and returns
    at once; only the read's own subject's facts are counted. The buffer is
    written ``flush_interval_s`` after the first access in it (repeated reads of
    a fact in between coalesce into one increment and one maximum), or at once
    past ``max_buffered`` facts. Reads ``via`` one of ``ignored`` (the operators'
    inspector page, by default) do not count: looking at the store to debug it
    must not keep facts alive. :meth:`drain` writes what is buffered: a
    short-lived process (the CLI) calls it before closing.
    """

    def __init__(
        self,
        access: RedisAccess,
        *,
        clock: Callable[[], datetime] = _utc_now,
        ignored: Iterable[str] = ("inspector",),
        flush_interval_s: float = 0.1,
        max_buffered: int = 10_000,
    ) -> None:
        self._access = access
        self._clock = clock
        self._ignored = frozenset(ignored)
        self._interval_s = flush_interval_s
        self._max_buffered = max_buffered
        self._buffer: dict[str, dict[str, tuple[int, datetime]]] = {}
        self._buffered = 0
        self._writer: asyncio.Task[None] | None = None
        self._writing = False

    async def __call__(self, subject_id: str, facts: Sequence[Fact], via: str) -> None:
        if via.split("+", 1)[0] in self._ignored:
            return
        ids = [f.fact_id for f in facts if f.subject_id == subject_id]
        if not ids:
            return
        at = self._clock()
        own = self._buffer.setdefault(subject_id, {})
        for fact_id in ids:
            count, last = own.get(fact_id, (0, at))
            own[fact_id] = (count + 1, max(last, at))
        self._buffered += len(ids)
        if self._writer is None or self._writer.done():
            soon = 0.0 if self._buffered >= self._max_buffered else self._interval_s
            self._writer = asyncio.create_task(self._write_after(soon))

    @property
    def pending(self) -> int:
        """Facts' accesses buffered and not written yet."""
        return self._buffered

    async def _write_after(self, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        self._writing = True
        try:
            await self._write()
        finally:
            self._writing = False

    async def _write(self) -> None:
        taken, self._buffer, count = self._buffer, {}, self._buffered
        self._buffered = 0
        if not taken:
            return
        try:
            await self._access.record_many(taken)
        except SlotwiseError as exc:
            ACCESSES.labels("failed").inc(count)
            log.warning("recording %d accesses failed: %s", count, exc)
        else:
            ACCESSES.labels("recorded").inc(count)

    async def drain(self, timeout_s: float = 2.0) -> None:
        """Write what is buffered now (waiting at most ``timeout_s``)."""
        writer, self._writer = self._writer, None
        if writer is not None and not writer.done():
            if self._writing:  # a write under way holds what it took: let it land
                await asyncio.wait({writer}, timeout=timeout_s)
            else:
                writer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await writer
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._write(), timeout=timeout_s)
