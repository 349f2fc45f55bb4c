"""The hot state of every subject in Redis: facts, slot index, applied events, watermark.

One worker writes a subject at a time (its partition's owner), so the store
needs no locks; it needs fencing instead. Every write of one event is one Lua
script that first checks the event is new and the subject's version is the one
the decision was computed against, so a replay changes nothing and a zombie
worker after a rebalance cannot overwrite its successor.

Keys of a subject share the hash tag ``{subject}`` (Redis Cluster keeps them on
one slot, so the script may touch all of them)::

    <prefix>:{<subject>}:facts         hash  fact_id → Fact JSON (latest state)
    <prefix>:{<subject>}:slots         zset  "<slot>\\0<fact_id>" of every current fact, score 0
    <prefix>:{<subject>}:current       hash  fact_id → <slot> of every current fact
    <prefix>:{<subject>}:meta          hash  version, watermark, updated_at
    <prefix>:{<subject>}:applied       hash  event_id → outputs blob stored when it was applied
    <prefix>:{<subject>}:applied_at    zset  event_id by apply time (ms), for pruning
    <prefix>:{<subject>}:observations  zset  observation_id by apply time (ms)

A fact is in the slot index iff its status is ``current``. ``<slot>`` is
``a:<attribute>``, or ``-`` for facts without an attribute. One slot's facts
are a lexicographic range of ``slots``, so reading a slot and every write to
the index are O(log n) and the apply script never decodes JSON.

The subject id is percent-encoded in key names, so a subject id holding ``}``
or glob characters can neither move keys to another hash slot nor make one
subject's key pattern match another's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from typing import Any
from urllib.parse import quote

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ReadOnlyError, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from slotwise.processors.model import ApplyOutcome, ApplyStatus
from slotwise.sinks.exceptions import CorruptRecord, StoreError, StoreUnavailable
from slotwise.sinks.redis.batch import ScriptBatch
from slotwise.sinks.redis.connect import redis_client
from slotwise.sinks.redis.identity import ServerIdentity
from slotwise.topics.codec import decode_record, encode_record
from slotwise.topics.exceptions import RecordError
from slotwise.topics.records import Fact

__all__ = ["RedisStore", "Snapshot"]

DEFAULT_RETENTION = timedelta(days=7)
_UNSLOTTED = "-"
_EVERY_SLOT = "*"
# Kept readable in key names; everything else (notably "{", "}", "%" and the
# glob characters "*?[]\\") is percent-encoded.
_SAFE = "!$&'()+,-./:;=@_~"
_GLOB = str.maketrans({c: "\\" + c for c in "*?[]\\"})
_SIZE = {"hash": "HLEN", "zset": "ZCARD", "set": "SCARD", "list": "LLEN", "stream": "XLEN"}


def _script(name: str) -> str:
    return resources.files("slotwise.sinks.redis").joinpath("lua", name).read_text(encoding="utf-8")


def _slot_field(attribute: str | None) -> str:
    if attribute is None:
        return _UNSLOTTED
    if "\0" in attribute:
        # NUL separates the slot from the fact id in the slot index.
        raise ValueError(f"attribute {attribute!r} contains a NUL character")
    return f"a:{attribute}"


def _raw(value: bytes | str) -> bytes:
    # The client is built with decode_responses=False; its stubs allow both.
    return value if isinstance(value, bytes) else value.encode()


def _epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What deciding one event reads about its subject, read in one round trip.

    ``stored`` is the outputs blob of the event if it was applied before (then
    nothing else was read). Otherwise ``own`` is the fact with the id asked
    for, if stored, and ``slot`` the current facts of the attribute asked for.
    A snapshot is a ``slotwise.processors.ports.FactReader``: it answers what it holds
    and sends any other read to the store.
    """

    store: RedisStore
    subject_id: str
    version: int
    stored: bytes | None
    own_fact_id: str | None
    own: Fact | None
    attribute: str | None
    slot: tuple[Fact, ...]

    async def current_in_slot(self, subject_id: str, attribute: str) -> list[Fact]:
        if subject_id == self.subject_id and attribute == self.attribute:
            return list(self.slot)
        return await self.store.current_in_slot(subject_id, attribute)

    async def get_facts(self, subject_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        if subject_id == self.subject_id and list(fact_ids) == [self.own_fact_id]:
            return [self.own] if self.own is not None else []
        return await self.store.get_facts(subject_id, fact_ids)


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
        return (
            self.facts,
            self.slots,
            self.current,
            self.meta,
            self.applied,
            self.applied_at,
            self.observations,
        )


@contextmanager
def _translated(action: str) -> Iterator[None]:
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError) as exc:
        raise StoreUnavailable(f"redis unavailable while {action}: {exc}") from exc
    except ReadOnlyError as exc:
        # A primary demoted under a client that reaches it by a fixed address: the
        # writes wait for the address to lead to the promoted one.
        raise StoreUnavailable(f"redis is a read-only replica while {action}: {exc}") from exc
    except RedisError as exc:
        raise StoreError(f"redis refused {action}: {exc}") from exc


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
        self._prefix = prefix
        self._retention_ms = int(retention.total_seconds() * 1000)
        self._prune_batch = prune_batch
        self._wait_recheck_s = wait_recheck_s
        self._apply = client.register_script(_script("apply.lua"))
        self._lookup = client.register_script(_script("lookup.lua"))
        # Concurrent subjects' reads and writes go to Redis together (sinks/redis/batch.py).
        self._batch = ScriptBatch(client)

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

    def _tag(self, subject_id: str) -> str:
        return f"{self._prefix}:{{{quote(subject_id, safe=_SAFE)}}}"

    @property
    def client(self) -> aioredis.Redis:
        """The client, for stores built on this one (``sinks.redis_erasure``)."""
        return self._redis

    @property
    def batch(self) -> ScriptBatch:
        """The store's script calls on the hot path, for stores built on this one to join."""
        return self._batch

    def key(self, subject_id: str, kind: str) -> str:
        """The name of one of the subject's keys (``facts``, ``applied``, ...)."""
        return f"{self._tag(subject_id)}:{kind}"

    def key_pattern(self, subject_id: str) -> str:
        """A SCAN pattern matching every key of the subject and no other subject's."""
        return self._tag(subject_id).translate(_GLOB) + ":*"

    def _keys(self, subject_id: str) -> _Keys:
        tag = self._tag(subject_id)
        return _Keys(
            facts=f"{tag}:facts",
            slots=f"{tag}:slots",
            current=f"{tag}:current",
            meta=f"{tag}:meta",
            applied=f"{tag}:applied",
            applied_at=f"{tag}:applied_at",
            observations=f"{tag}:observations",
            channel=f"{tag}:observed",
        )

    async def ping(self) -> bool:
        with _translated("answering PING"):
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
        with _translated("reading facts"):
            bodies = await self._redis.hmget(keys.facts, list(fact_ids))
        return [self._decode(keys.facts, _raw(body)) for body in bodies if body is not None]

    async def snapshot(
        self,
        subject_id: str,
        event_id: str | None = None,
        *,
        own_fact_id: str | None = None,
        attribute: str | None = None,
        every_slot: bool = False,
    ) -> Snapshot:
        """The subject's version, the event's stored outputs, one fact and one slot, at once.

        The current facts read are those of ``attribute``, or of every slot
        with ``every_slot``, or none.
        """
        keys = self._keys(subject_id)
        field = _EVERY_SLOT if every_slot else _slot_field(attribute) if attribute else ""
        with _translated("reading a subject"):
            reply = await self._batch.call(
                self._lookup,
                [keys.meta, keys.applied, keys.facts, keys.slots, keys.current],
                [event_id or "", own_fact_id or "", field],
            )
        version, stored, own, *bodies = (_raw(part) for part in reply)
        return Snapshot(
            store=self,
            subject_id=subject_id,
            version=int(version),
            stored=stored or None,
            own_fact_id=own_fact_id,
            own=self._decode(keys.facts, own) if own else None,
            attribute=attribute,
            slot=tuple(self._decode(keys.facts, body) for body in bodies),
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
            args += [fact.fact_id, _slot_field(fact.attribute), current, encode_record(fact)]
        with _translated("applying an event"):
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
        with _translated("reading the version"):
            raw = await self._redis.hget(self._keys(subject_id).meta, "version")
        return int(raw) if raw is not None else 0

    async def applied(self, subject_id: str, event_id: str) -> bytes | None:
        with _translated("reading an applied event"):
            stored = await self._redis.hget(self._keys(subject_id).applied, event_id)
        return _raw(stored) if stored is not None else None

    # -- read-your-writes ---------------------------------------------------

    async def watermark(self, subject_id: str) -> str | None:
        with _translated("reading the watermark"):
            raw = await self._redis.hget(self._keys(subject_id).meta, "watermark")
        return _raw(raw).decode() if raw is not None else None

    async def observation_applied(self, subject_id: str, observation_id: str) -> bool:
        with _translated("reading an observation mark"):
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
            with _translated("waiting for an observation"):
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
            with _translated("listing facts"):
                bodies = await self._redis.hvals(key)
            facts = [self._decode(key, _raw(body)) for body in bodies]
        else:
            facts = list((await self.snapshot(subject_id, every_slot=True)).slot)
        return sorted(
            facts,
            key=lambda f: (f.attribute is None, f.attribute or "", f.valid_from, f.fact_id),
        )

    # -- erasure ------------------------------------------------------------

    async def erase_subject(self, subject_id: str) -> dict[str, int]:
        """Delete every key of the subject; entries deleted per key kind."""
        found = await self._sizes(subject_id)
        if found:
            with _translated("erasing a subject"):
                await self._redis.delete(*found)
        return {self._kind(subject_id, key): size for key, size in found.items()}

    async def residue(self, subject_id: str) -> dict[str, int]:
        """Entries left per key kind, found by scanning: empty after an erasure."""
        found = await self._sizes(subject_id)
        return {self._kind(subject_id, key): size for key, size in found.items()}

    async def _sizes(self, subject_id: str) -> dict[str, int]:
        pattern = self.key_pattern(subject_id)
        with _translated("scanning a subject's keys"):
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

    def _kind(self, subject_id: str, key: str) -> str:
        return key.removeprefix(self._tag(subject_id) + ":")

    @staticmethod
    def _decode(key: str, body: bytes) -> Fact:
        try:
            record = decode_record(body, expect=(Fact,))
        except RecordError as exc:
            raise CorruptRecord(f"{key}: a stored fact does not decode: {exc}", key=key) from exc
        if not isinstance(record, Fact):
            raise CorruptRecord(f"{key}: holds a {type(record).__name__}, not a fact", key=key)
        return record
