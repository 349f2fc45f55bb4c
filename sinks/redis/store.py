"""The hot state of every subject in Redis: facts, slot index, applied events, watermark.

One worker writes a subject at a time (its partition's owner), so the store
needs no locks; it needs fencing instead. Every write of one event is one Lua
script that first checks the event is new and the subject's version is the one
the decision was computed against, so a replay changes nothing and a zombie
worker after a rebalance cannot overwrite its successor.

Its keys, one hash tag per subject, are named in ``sinks/redis/keys.py``: the
facts, the slot index of the current facts (a fact is in it iff its status is
``current``; one slot's facts are a lexicographic range, so reading a slot and
every write to the index are O(log n) and the apply script never decodes
JSON), the version and watermark, the applied events and the observations.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import redis.asyncio as aioredis

from slotwise.processors.model import ApplyOutcome, ApplyStatus
from slotwise.sinks.exceptions import StoreUnavailable
from slotwise.sinks.redis import keys as kinds
from slotwise.sinks.redis.batch import ScriptBatch
from slotwise.sinks.redis.connect import redis_client
from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.identity import ServerIdentity
from slotwise.sinks.redis.keys import KeyLayout, slot_field
from slotwise.sinks.redis.replies import as_bytes, decode_fact
from slotwise.sinks.redis.scripts import lua_script
from slotwise.sinks.redis.snapshot import Snapshot
from slotwise.topics.codec import encode_record
from slotwise.topics.records import Fact

__all__ = ["RedisStore"]

DEFAULT_RETENTION = timedelta(days=7)
_EVERY_SLOT = "*"
_SIZE = {"hash": "HLEN", "zset": "ZCARD", "set": "SCARD", "list": "LLEN", "stream": "XLEN"}


def _epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class _Keys:
    facts: str
    slots: str
    current: str
    meta: str
    applied: str
    applied_at: str
    observations: str
    channel: str

    @property
    def all(self) -> tuple[str, ...]:
        """In the order of ``keys.STORE_KINDS``."""
        return (
            self.facts,
            self.slots,
            self.current,
            self.meta,
            self.applied,
            self.applied_at,
            self.observations,
        )


class RedisStore:
    """Per-subject state; implements ``slotwise.processors.ports.FactReader``.

    The injected client must return bytes (``decode_responses=False``).
    ``retention`` bounds how long applied event ids and observation marks are
    kept: the candidates topic's retention, past which no replay can arrive.
    """

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        prefix: str = "sw",
        retention: timedelta = DEFAULT_RETENTION,
        prune_batch: int = 100,
        wait_recheck_s: float = 0.5,
        identity: ServerIdentity | None = None,
    ) -> None:
        self._redis = client
        # Which server the client's connections reach (``sinks/redis/identity.py``).
        self.identity = identity or ServerIdentity()
        self.layout = KeyLayout(prefix)
        self._retention_ms = int(retention.total_seconds() * 1000)
        self._prune_batch = prune_batch
        self._wait_recheck_s = wait_recheck_s
        self._apply = client.register_script(lua_script("apply.lua"))
        self._lookup = client.register_script(lua_script("lookup.lua"))
        # Concurrent subjects' reads and writes go to Redis together (sinks/redis/batch.py).
        self._batch = ScriptBatch(client)
        # A candidate's snapshot and apply each name its subject's eight keys: built once
        # for the recent subjects (they were 1.5 % of the exact path's worker CPU).
        self._keys: Callable[[str], _Keys] = functools.lru_cache(maxsize=4096)(self._subject_keys)

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = "sw",
        retention: timedelta = DEFAULT_RETENTION,
        timeout_s: float = 5.0,
        max_connections: int = 64,
        sentinels: Sequence[tuple[str, int]] = (),
        master: str = "slotwise",
    ) -> RedisStore:
        """A store on its own connection pool, through ``sentinels`` when given
        (``sinks/redis/connect.py``).

        The pool makes a caller wait for a free connection, as long as it takes
        (a dead server still fails by the socket timeouts): redis-py's default
        pool fails at once past 100 connections, and a worker with a thousand
        records in flight then spent more time in retries than in Redis.
        """
        identity = ServerIdentity()
        client = redis_client(
            url,
            sentinels=sentinels,
            master=master,
            timeout_s=timeout_s,
            max_connections=max_connections,
            identity=identity,
        )
        return cls(client, prefix=prefix, retention=retention, identity=identity)

    @property
    def client(self) -> aioredis.Redis:
        """The client, for stores built on this one (``sinks/redis/erasure.py``, ...)."""
        return self._redis

    @property
    def batch(self) -> ScriptBatch:
        """The store's script calls on the hot path, for stores built on this one to join."""
        return self._batch

    def key(self, subject_id: str, kind: str) -> str:
        """The name of one of the subject's keys (a kind of ``sinks/redis/keys.py``)."""
        return self.layout.key(subject_id, kind)

    def key_pattern(self, subject_id: str) -> str:
        """A SCAN pattern matching every key of the subject and no other subject's."""
        return self.layout.subject_pattern(subject_id)

    def _subject_keys(self, subject_id: str) -> _Keys:
        key = functools.partial(self.layout.key, subject_id)
        return _Keys(
            facts=key(kinds.FACTS),
            slots=key(kinds.SLOTS),
            current=key(kinds.CURRENT),
            meta=key(kinds.META),
            applied=key(kinds.APPLIED),
            applied_at=key(kinds.APPLIED_AT),
            observations=key(kinds.OBSERVATIONS),
            channel=key(kinds.OBSERVED),
        )

    async def ping(self) -> bool:
        with translated("answering PING"):
            return bool(await self._redis.ping())

    async def close(self) -> None:
        await self._redis.aclose()

    # -- FactReader ---------------------------------------------------------

    async def current_in_slot(self, subject_id: str, attribute: str) -> list[Fact]:
        seen = await self.snapshot(subject_id, attribute=attribute)
        return sorted(seen.slot, key=lambda f: (f.valid_from, f.recorded_at, f.fact_id))

    async def get_facts(self, subject_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        if not fact_ids:
            return []
        keys = self._keys(subject_id)
        with translated("reading facts"):
            bodies = await self._redis.hmget(keys.facts, list(fact_ids))
        return [decode_fact(keys.facts, as_bytes(body)) for body in bodies if body is not None]

    async def snapshot(
        self,
        subject_id: str,
        event_id: str | None = None,
        *,
        own_fact_id: str | None = None,
        attribute: str | None = None,
    ) -> Snapshot:
        """The subject's version, the event's stored outputs, one fact and one slot, at once.

        The current facts read are those of ``attribute``, or none.
        """
        field = slot_field(attribute) if attribute else ""
        return await self._snapshot(subject_id, event_id, own_fact_id, attribute, field)

    async def snapshot_every_slot(self, subject_id: str, event_id: str | None = None) -> Snapshot:
        """:meth:`snapshot` with the current facts of every slot (what a forget pass scores)."""
        return await self._snapshot(subject_id, event_id, None, None, _EVERY_SLOT)

    async def _snapshot(
        self,
        subject_id: str,
        event_id: str | None,
        own_fact_id: str | None,
        attribute: str | None,
        field: str,
    ) -> Snapshot:
        keys = self._keys(subject_id)
        with translated("reading a subject"):
            reply = await self._batch.call(
                self._lookup,
                [keys.meta, keys.applied, keys.facts, keys.slots, keys.current],
                [event_id or "", own_fact_id or "", field],
            )
        version, stored, own, *bodies = (as_bytes(part) for part in reply)
        return Snapshot(
            store=self,
            subject_id=subject_id,
            version=int(version),
            stored=stored or None,
            own_fact_id=own_fact_id,
            own=decode_fact(keys.facts, own) if own else None,
            attribute=attribute,
            slot=tuple(decode_fact(keys.facts, body) for body in bodies),
        )

    # -- the write ----------------------------------------------------------

    async def apply(
        self,
        subject_id: str,
        event_id: str,
        *,
        expected_version: int,
        facts: Sequence[Fact],
        outputs: bytes,
        observation_id: str | None = None,
        now: datetime,
    ) -> ApplyOutcome:
        """Write one event's facts, outputs and watermark at once, or nothing.

        Nothing is written if ``event_id`` was applied before (the stored
        outputs come back) or if the subject is no longer at ``expected_version``.
        Raises :class:`StoreUnavailable` on a server other than the one
        ``identity`` accepted (``sinks/redis/identity.py``).
        """
        foreign = [f.fact_id for f in facts if f.subject_id != subject_id]
        if foreign:
            raise ValueError(f"facts {foreign} are not about subject {subject_id!r}")
        keys = self._keys(subject_id)
        now_ms = _epoch_ms(now)
        args: list[str | bytes | int] = [
            event_id,
            expected_version,
            outputs,
            now_ms,
            now.isoformat(),
            now_ms - self._retention_ms,
            observation_id or "",
            keys.channel,
            self._prune_batch,
            self.identity.token,
        ]
        for fact in facts:
            current = "1" if fact.status == "current" else "0"
            args += [fact.fact_id, slot_field(fact.attribute), current, encode_record(fact)]
        with translated("applying an event"):
            reply = await self._batch.call(self._apply, keys.all, args)
        if reply[0] == b"fenced":
            raise StoreUnavailable(
                "the Redis server changed under this event: it waits for the replay of "
                "what the old server may have lost"
            )
        status = ApplyStatus(reply[0].decode())
        stored = reply[2] if status is ApplyStatus.ALREADY_APPLIED else None
        return ApplyOutcome(status, int(reply[1]), stored)

    async def version(self, subject_id: str) -> int:
        with translated("reading the version"):
            raw = await self._redis.hget(self._keys(subject_id).meta, "version")
        return int(raw) if raw is not None else 0

    async def applied(self, subject_id: str, event_id: str) -> bytes | None:
        with translated("reading an applied event"):
            stored = await self._redis.hget(self._keys(subject_id).applied, event_id)
        return as_bytes(stored) if stored is not None else None

    async def applied_many(self, events: Sequence[tuple[str, str]]) -> list[bytes | None]:
        """:meth:`applied` of each ``(subject_id, event_id)``, in order, in one round trip
        (a pass waiting for its commands)."""
        if not events:
            return []
        with translated("reading applied events"):
            async with self._redis.pipeline(transaction=False) as pipe:
                for subject_id, event_id in events:
                    pipe.hget(self._keys(subject_id).applied, event_id)
                found = await pipe.execute()
        return [None if blob is None else as_bytes(blob) for blob in found]

    # -- read-your-writes ---------------------------------------------------

    async def watermark(self, subject_id: str) -> str | None:
        with translated("reading the watermark"):
            raw = await self._redis.hget(self._keys(subject_id).meta, "watermark")
        return as_bytes(raw).decode() if raw is not None else None

    async def observation_applied(self, subject_id: str, observation_id: str) -> bool:
        with translated("reading an observation mark"):
            score = await self._redis.zscore(self._keys(subject_id).observations, observation_id)
        return score is not None

    async def wait_for_observation(
        self, subject_id: str, observation_id: str, timeout_s: float
    ) -> bool:
        """True as soon as the observation is applied; False after ``timeout_s``.

        Subscribes to the subject's channel before checking, so an apply in
        between is not missed; rechecks now and then in case a message is lost.
        """
        keys = self._keys(subject_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        wanted = observation_id.encode()
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        try:
            with translated("waiting for an observation"):
                await pubsub.subscribe(keys.channel)
                while not await self.observation_applied(subject_id, observation_id):
                    remaining = deadline - loop.time()
                    if remaining <= 0:
                        return False
                    message = await pubsub.get_message(timeout=min(remaining, self._wait_recheck_s))
                    if message is not None and message["data"] == wanted:
                        return True
                return True
        finally:
            await pubsub.aclose()

    # -- reads for people ---------------------------------------------------

    async def facts(self, subject_id: str, *, include_history: bool = False) -> list[Fact]:
        """The subject's current facts (or every fact), by attribute then valid_from."""
        if include_history:
            key = self._keys(subject_id).facts
            with translated("listing facts"):
                bodies = await self._redis.hvals(key)
            facts = [decode_fact(key, as_bytes(body)) for body in bodies]
        else:
            facts = list((await self.snapshot_every_slot(subject_id)).slot)
        return sorted(
            facts,
            key=lambda f: (f.attribute is None, f.attribute or "", f.valid_from, f.fact_id),
        )

    # -- erasure ------------------------------------------------------------

    async def erase_subject(self, subject_id: str) -> dict[str, int]:
        """Delete every key of the subject; entries deleted per key kind."""
        found = await self._sizes(subject_id)
        if found:
            with translated("erasing a subject"):
                await self._redis.delete(*found)
        return {self.layout.kind_of(subject_id, key): size for key, size in found.items()}

    async def residue(self, subject_id: str) -> dict[str, int]:
        """Entries left per key kind, found by scanning: empty after an erasure."""
        found = await self._sizes(subject_id)
        return {self.layout.kind_of(subject_id, key): size for key, size in found.items()}

    async def _sizes(self, subject_id: str) -> dict[str, int]:
        pattern = self.key_pattern(subject_id)
        with translated("scanning a subject's keys"):
            keys = sorted(
                {k.decode() async for k in self._redis.scan_iter(match=pattern, count=1000)}
                | set(self._keys(subject_id).all)
            )
            async with self._redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.type(key)
                types = [t.decode() for t in await pipe.execute()]
            present = [(k, t) for k, t in zip(keys, types, strict=True) if t != "none"]
            async with self._redis.pipeline(transaction=False) as pipe:
                for key, kind in present:
                    if kind in _SIZE:
                        pipe.execute_command(_SIZE[kind], key)
                    else:
                        pipe.exists(key)
                sizes: list[Any] = await pipe.execute()
        return {key: int(size) for (key, _), size in zip(present, sizes, strict=True)}
