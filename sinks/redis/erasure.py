"""The Redis side of an erase command: its three atomic steps, and what is left to look at.

Built on :class:`~slotwise.sinks.redis.store.RedisStore` (its client, key names
and fencing version); it adds one key per subject, same hash tag::

    <prefix>:{<subject>}:erasing   hash  command_id → progress of an unfinished erase

The steps are one Lua script (``lua/erase.lua``), each atomic, fenced by the
subject's version, and a no-op once the command has finished (its outputs are
then in ``applied``, as any event's):

* ``begin`` records the erasure's progress before anything irreversible
  happens (the version it was planned against, the vector rows found), or
  returns the record an earlier, interrupted run left (the erasure resumes);
* ``delete`` deletes the facts (for a whole subject, every key but
  :data:`KEEP`), writes the kept facts whose links changed, replaces the stored
  outputs of earlier events with content-free ones, records the progress (now
  with the texts the checks look for) and bumps the version;
* ``finish`` stores the command's own outputs (attestation, tombstones),
  drops the progress record and bumps the version.

:data:`KEEP` is what a whole-subject erase leaves: ``meta`` (the version is the
fence; the watermark an observation id), ``applied`` (every event's entry, its
outputs rewritten empty, so a replay of an erased event finds it applied and
emits and writes nothing), ``applied_at`` and ``observations`` (ids and times).

Other features keep keys of their own under the subject's tag (accesses, the
cold and provenance indexes, review items). :meth:`RedisErasure.sweep` clears
the scope from them, and is run again before every check: some are written
outside the subject's log, so they can name an erased fact after the delete.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import (
    APPLIED,
    APPLIED_AT,
    CURRENT,
    ERASING,
    FACTS,
    META,
    OBSERVATIONS,
    SLOTS,
    slot_field,
)
from slotwise.sinks.redis.replies import as_bytes, decode_fact
from slotwise.sinks.redis.scripts import lua_script
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.codec import dumps, encode_record
from slotwise.topics.records import Fact

__all__ = ["KEEP", "EraseStep", "RedisErasure", "SubjectState", "other_kinds"]

KEEP = frozenset({META, APPLIED, APPLIED_AT, OBSERVATIONS})
_OWN = (FACTS, SLOTS, CURRENT)


def other_kinds(keys: Mapping[str, str]) -> dict[str, str]:
    """Of a subject's keys (kind → type), those beyond ``RedisStore``'s own and ``KEEP``:
    what other features keep about the subject."""
    return {k: t for k, t in keys.items() if k not in KEEP and k not in _OWN and k != ERASING}


_SCAN = 500


@dataclass(frozen=True, slots=True)
class EraseStep:
    """What one step did: ``status`` is the script's answer (see ``lua/erase.lua``),
    ``blob`` the progress record or, once finished, the command's stored outputs."""

    status: str
    version: int
    blob: bytes | None = None

    @property
    def stale(self) -> bool:
        return self.status == "stale"

    @property
    def finished(self) -> bool:
        return self.status == "already_applied"


@dataclass(frozen=True, slots=True)
class SubjectState:
    """Everything an erasure plans from: every fact, every stored outputs blob, and the
    kind (the part after the subject's tag) and Redis type of every key."""

    facts: list[Fact]
    outputs: dict[str, bytes]
    keys: dict[str, str]


_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _mentions(raw: bytes, ids: frozenset[bytes], texts: Sequence[bytes]) -> bool:
    """Whether an entry names an erased fact: one of its NUL-separated parts or uuid
    tokens is an erased id, or it holds an erased text."""
    if ids.intersection(raw.split(b"\0")) or ids.intersection(_UUID.findall(raw)):
        return True
    return any(t in raw for t in texts)


class RedisErasure:
    def __init__(self, store: RedisStore) -> None:
        self._store = store
        self._redis = store.client
        self._erase = self._redis.register_script(lua_script("erase.lua"))

    async def progress(self, subject_id: str, command_id: str) -> bytes | None:
        """The progress record of an unfinished erase, if one was begun."""
        with translated("reading an erasure's progress"):
            raw = await self._redis.hget(self._store.key(subject_id, ERASING), command_id)
        return as_bytes(raw) if raw is not None else None

    async def state(self, subject_id: str) -> SubjectState:
        key = self._store.key(subject_id, FACTS)
        with translated("reading a subject's facts and stored outputs"):
            bodies = [as_bytes(b) async for _, b in self._redis.hscan_iter(key, count=_SCAN)]
            outputs = {
                as_bytes(event).decode(): as_bytes(blob)
                async for event, blob in self._redis.hscan_iter(
                    self._store.key(subject_id, APPLIED), count=_SCAN
                )
            }
        # Thousands of facts decode in a thread: the event loop serves other subjects.
        facts = await asyncio.to_thread(lambda: [decode_fact(key, b) for b in bodies])
        return SubjectState(facts, outputs, await self.keys(subject_id))

    async def keys(self, subject_id: str) -> dict[str, str]:
        """Kind → Redis type of every key the subject has, found by scanning."""
        layout = self._store.layout
        with translated("scanning a subject's keys"):
            names = sorted(
                {
                    as_bytes(k).decode()
                    async for k in self._redis.scan_iter(
                        match=self._store.key_pattern(subject_id), count=1000
                    )
                }
            )
            async with self._redis.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.type(name)
                types = [as_bytes(t).decode() for t in await pipe.execute()]
        return {
            layout.kind_of(subject_id, n): t
            for n, t in zip(names, types, strict=True)
            if t != "none"
        }

    async def begin(
        self,
        subject_id: str,
        command_id: str,
        *,
        expected_version: int,
        progress: bytes,
        force: bool = False,
    ) -> EraseStep:
        return await self._step(
            subject_id, [], ["begin", command_id, expected_version, progress, "1" if force else ""]
        )

    async def delete(
        self,
        subject_id: str,
        command_id: str,
        *,
        expected_version: int,
        progress: bytes,
        now: datetime,
        whole_subject: bool,
        erased_ids: Sequence[str],
        relinked: Sequence[Fact],
        rewrites: Mapping[str, bytes],
        other_kinds: Sequence[str] = (),
    ) -> EraseStep:
        """The deleting step. ``other_kinds`` are the subject's keys beyond this store's own
        to delete with a whole subject (a feature's key added later, say)."""
        doomed = [self._store.key(subject_id, kind) for kind in other_kinds]
        args: list[str | bytes | int] = [
            "delete", command_id, expected_version, progress, now.isoformat(),
            "1" if whole_subject else "0", len(erased_ids), *erased_ids, len(relinked),
        ]  # fmt: skip
        for fact in relinked:
            current = "1" if fact.status == "current" else "0"
            args += [fact.fact_id, slot_field(fact.attribute), current, encode_record(fact)]
        args.append(len(rewrites))
        for event_id, blob in rewrites.items():
            args += [event_id, blob]
        return await self._step(subject_id, doomed, args)

    async def finish(
        self,
        subject_id: str,
        command_id: str,
        *,
        expected_version: int,
        outputs: bytes,
        now: datetime,
    ) -> EraseStep:
        now_ms = int(now.timestamp() * 1000)
        args: list[str | bytes | int] = [
            "finish",
            command_id,
            expected_version,
            outputs,
            now_ms,
            now.isoformat(),
        ]
        return await self._step(subject_id, [], args)

    async def sweep(
        self,
        subject_id: str,
        *,
        whole_subject: bool,
        ids: Sequence[str],
        texts: Sequence[str],
    ) -> dict[str, int]:
        """Clear the scope from the keys other features keep beside this store's own
        (access records, the cold and provenance indexes, review items, ...); entries
        removed per kind. For a whole subject every such key goes; otherwise the entries
        naming an erased fact (a field, a member or one of its NUL-separated parts, a
        value mentioning its id or text), and the members naming a hash field removed
        (a review item's place in ``review_open``).

        Repeatable, and repeated: some of these keys are written outside the subject's
        log (a read records its accesses when it is done), so one can name an erased
        fact again after the delete.
        """
        others = other_kinds(await self.keys(subject_id))
        if whole_subject:
            return await self._drop_keys(subject_id, others)
        wanted = frozenset(i.encode() for i in ids)
        quoted = tuple({form for t in texts for form in (t.encode(), dumps(t)[1:-1])})
        doomed: dict[str, tuple[str, list[bytes]]] = {}
        for kind, kind_type in others.items():
            if kind_type not in ("hash", "zset", "set"):
                continue  # not editable entry by entry: the checks report what it holds
            entries = await self._entries(self._store.key(subject_id, kind), kind_type)
            hits = [
                field
                for field, value in entries
                if _mentions(field, wanted, quoted)
                or (kind_type == "hash" and _mentions(value, wanted, quoted))
            ]
            if hits:
                doomed[kind] = (kind_type, hits)
        fields = {f for kind_type, hits in doomed.values() if kind_type == "hash" for f in hits}
        if fields:
            for kind, kind_type in others.items():
                if kind_type in ("zset", "set") and kind not in doomed:
                    entries = await self._entries(self._store.key(subject_id, kind), kind_type)
                    hits = [m for m, _ in entries if m in fields]
                    if hits:
                        doomed[kind] = (kind_type, hits)
        return await self._remove(subject_id, doomed)

    async def _drop_keys(self, subject_id: str, kinds: Mapping[str, str]) -> dict[str, int]:
        if not kinds:
            return {}
        with translated("deleting a subject's keys"):
            await self._redis.delete(*(self._store.key(subject_id, k) for k in kinds))
        return {"redis:keys": len(kinds)}

    async def _remove(
        self, subject_id: str, doomed: Mapping[str, tuple[str, list[bytes]]]
    ) -> dict[str, int]:
        if not doomed:
            return {}
        with translated("removing erased entries"):
            async with self._redis.pipeline(transaction=False) as pipe:
                for kind, (kind_type, entries) in doomed.items():
                    key = self._store.key(subject_id, kind)
                    if kind_type == "hash":
                        pipe.hdel(key, *entries)
                    elif kind_type == "zset":
                        pipe.zrem(key, *entries)
                    else:
                        pipe.srem(key, *entries)
                removed = await pipe.execute()
        return {f"redis:{kind}": int(n) for kind, n in zip(doomed, removed, strict=True)}

    async def contents(self, subject_id: str) -> dict[str, list[tuple[bytes, bytes]]]:
        """Every entry the subject's keys hold, by kind: ``(field or member, value or
        score)`` pairs. The progress record is left out: it is dropped at ``finish``."""
        found: dict[str, list[tuple[bytes, bytes]]] = {}
        for kind, kind_type in (await self.keys(subject_id)).items():
            if kind != ERASING:
                found[kind] = await self._entries(self._store.key(subject_id, kind), kind_type)
        return found

    async def _entries(self, key: str, kind_type: str) -> list[tuple[bytes, bytes]]:
        redis = self._redis
        with translated("reading a subject's key"):
            if kind_type == "hash":
                return [
                    (as_bytes(f), as_bytes(v)) async for f, v in redis.hscan_iter(key, count=_SCAN)
                ]
            if kind_type == "zset":
                return [
                    (as_bytes(m), str(s).encode())
                    async for m, s in redis.zscan_iter(key, count=_SCAN)
                ]
            if kind_type == "set":
                return [(as_bytes(m), b"") async for m in redis.sscan_iter(key, count=_SCAN)]
            if kind_type == "list":
                return [(b"", as_bytes(v)) for v in await redis.lrange(key, 0, -1)]
            if kind_type == "string":
                value = await redis.get(key)
                return [(b"", as_bytes(value))] if value is not None else []
            if kind_type == "stream":
                entries = await redis.xrange(key)
                return [(str(i).encode(), repr(fields).encode()) for i, fields in entries or ()]
        return [(b"", kind_type.encode())]

    async def _step(
        self, subject_id: str, extra_keys: list[str], args: list[str | bytes | int]
    ) -> EraseStep:
        keys = [self._store.key(subject_id, kind) for kind in (META, APPLIED, APPLIED_AT, ERASING)]
        keys += [self._store.key(subject_id, kind) for kind in _OWN]
        with translated(f"erasing ({args[0]!s})"):
            reply = await self._erase(keys=[*keys, *extra_keys], args=args)
        status = as_bytes(reply[0]).decode()
        blob = as_bytes(reply[2]) if len(reply) > 2 else None
        return EraseStep(status, int(reply[1]), blob)
