"""Which facts of a subject are archived, by slot: what the write path checks before an ADD.

An archived fact leaves ``RedisStore``'s slot index (it holds current facts
only), so the exact join no longer sees it, yet a candidate restating it must
restore it rather than store a duplicate (``processors/cold_restate.py``). This
module keeps one more key per subject, same hash tag::

    <prefix>:{<subject>}:archived  zset  "<slot>\\0<fact_id>" of every archived fact, score 0

It is a *hint*, written after the fact's status changed (by the forget and
restore handlers, idempotently, again on a replay): every read checks each
entry against the fact's stored status and drops stale ones (a fact the write
path superseded, or an erasure deleted, while archived), so a stale entry can
cost a lookup but never make a fact look archived.

:func:`subjects` lists every subject with state under the prefix, for a pass
over all of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import ARCHIVED, FACTS, META, slot_field, slot_member
from slotwise.sinks.redis.replies import as_bytes, decode_fact
from slotwise.sinks.redis.scripts import lua_script
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.records import Fact

__all__ = ["RedisColdIndex", "subjects"]


def _member(fact: Fact) -> str:
    return slot_member(fact.attribute, fact.fact_id)


class RedisColdIndex:
    def __init__(self, store: RedisStore) -> None:
        self._store = store
        self._redis = store.client
        self._read = self._redis.register_script(lua_script("cold_slot.lua"))

    def _key(self, subject_id: str) -> str:
        return self._store.key(subject_id, ARCHIVED)

    async def mark(self, subject_id: str, facts: Iterable[Fact]) -> None:
        """Name these (archived) facts in the index."""
        members = {_member(f): 0 for f in facts if f.subject_id == subject_id}
        if members:
            with translated("marking archived facts"):
                await self._redis.zadd(self._key(subject_id), members)

    async def unmark(self, subject_id: str, facts: Iterable[Fact]) -> None:
        members = [_member(f) for f in facts if f.subject_id == subject_id]
        if members:
            with translated("unmarking archived facts"):
                await self._redis.zrem(self._key(subject_id), *members)

    async def archived_in_slot(self, subject_id: str, attribute: str | None) -> list[Fact]:
        """The subject's archived facts of ``attribute`` (None: the unslotted ones)."""
        _, facts = await self._call(subject_id, slot_field(attribute))
        return sorted(facts, key=lambda f: (f.valid_from, f.recorded_at, f.fact_id))

    async def archived_count(self, subject_id: str) -> int:
        """How many facts the index names for the subject (stale entries included)."""
        count, _ = await self._call(subject_id, "")
        return count

    async def _call(self, subject_id: str, field: str) -> tuple[int, list[Fact]]:
        keys = [self._key(subject_id), self._store.key(subject_id, FACTS)]
        with translated("reading archived facts"):
            # Read before most ADDs: sent with the other subjects' reads and writes.
            reply = await self._store.batch.call(self._read, keys, [field])
        count, *bodies = reply
        found = [decode_fact(keys[1], as_bytes(body)) for body in bodies]
        return int(count), [f for f in found if f.subject_id == subject_id]


async def subjects(store: RedisStore, *, batch: int = 1000) -> AsyncIterator[str]:
    """Every subject with a version under the store's prefix (each once, in no order)."""
    layout = store.layout
    seen: set[str] = set()
    with translated("listing subjects"):
        async for raw in store.client.scan_iter(match=layout.kind_pattern(META), count=batch):
            subject = layout.subject_of(as_bytes(raw).decode(), META)
            if subject not in seen:
                seen.add(subject)
                yield subject
