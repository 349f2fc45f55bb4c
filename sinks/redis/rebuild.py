"""Redis state put back from the compacted facts topic (``slotwise rebuild``).

What a rebuild writes per subject, in one script per subject and batch
(``lua/rebuild.lua``): each fact's latest record, the slot index of its
current facts, the archived-facts hint (``cold.py``), the observations its
facts came from (so read-your-writes answers for them) with the newest as the
watermark, and a version no decision made against the lost store can hold.
What the topic does not carry stays empty: the applied events' stored outputs
(a replay decides again), the access counts, the review items.

A rebuild's progress lives under its own hash tag, per scope (``all``, or one
subject): the next offset per partition of the facts topic, and the subject
of every fact seen, so a tombstone met after a resume still finds the subject
whose fact it deletes. Both are written after the batch they cover, so a
crash repeats at most one batch, and the script is idempotent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import cast

from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import (
    ARCHIVED,
    CURRENT,
    FACTS,
    META,
    OBSERVATIONS,
    SLOTS,
    KeyLayout,
    slot_field,
)
from slotwise.sinks.redis.replies import as_bytes
from slotwise.sinks.redis.scripts import lua_script
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.codec import encode_record
from slotwise.topics.records import Fact

__all__ = ["RedisRebuild"]

_STATE = {"current": "c", "archived": "a"}


def _entry(fact_id: str, fact: Fact | None) -> list[str | bytes | int]:
    if fact is None:
        return [fact_id, "", "x", b"", "", 0]
    return [
        fact_id,
        slot_field(fact.attribute),
        _STATE.get(fact.status, "o"),
        encode_record(fact),
        fact.observation_id or "",
        int(fact.recorded_at.timestamp() * 1000),
    ]


class RedisRebuild:
    def __init__(self, store: RedisStore, *, prefix: str) -> None:
        self._store = store
        self._redis = store.client
        self._layout = KeyLayout(prefix)
        self._put = self._redis.register_script(lua_script("rebuild.lua"))

    # -- the state ---------------------------------------------------------------

    async def put(
        self,
        subject_id: str,
        facts: Mapping[str, Fact | None],
        *,
        version_floor: int,
        now: datetime,
    ) -> int:
        """Write each fact's latest record (None: erased, a tombstone); facts written."""
        key = self._store.key
        args: list[str | bytes | int] = [version_floor, now.isoformat()]
        for fact_id, fact in facts.items():
            args += _entry(fact_id, fact)
        kinds = (FACTS, SLOTS, CURRENT, META, OBSERVATIONS, ARCHIVED)
        with translated("rebuilding a subject"):
            return int(await self._put(keys=[key(subject_id, k) for k in kinds], args=args))

    async def clear_subject(self, subject_id: str) -> None:
        """Drop what a rebuild of the subject writes, before rebuilding it alone."""
        kinds = (FACTS, SLOTS, CURRENT, OBSERVATIONS, ARCHIVED)
        with translated("clearing a subject"):
            await self._redis.delete(*(self._store.key(subject_id, k) for k in kinds))
            await self._redis.hdel(self._store.key(subject_id, META), "watermark")

    async def holds_facts(self) -> bool:
        """Whether any subject under the prefix has facts (a store to rebuild into is empty)."""
        with translated("looking for facts"):
            async for _ in self._redis.scan_iter(
                match=self._layout.kind_pattern(FACTS), count=1000
            ):
                return True
        return False

    async def current_index(self, subject_id: str) -> tuple[dict[str, str], set[str]]:
        """The subject's slot index as stored: fact id → slot, and the sorted set's members."""
        key = self._store.key
        with translated("reading a slot index"):
            current = await self._redis.hgetall(key(subject_id, CURRENT))
            # Without scores, ZRANGE answers members only (the stubs allow pairs too).
            members = cast(list[bytes], await self._redis.zrange(key(subject_id, SLOTS), 0, -1))
        return (
            {as_bytes(k).decode(): as_bytes(v).decode() for k, v in current.items()},
            {m.decode() for m in members},
        )

    # -- progress ----------------------------------------------------------------

    def _progress(self, scope: str, kind: str) -> str:
        return self._layout.rebuild_progress(scope, kind)

    async def begin(self, scope: str) -> None:
        """Mark a rebuild of ``scope`` as under way, before it writes anything."""
        with translated("recording a rebuild's progress"):
            await self._redis.hset(self._progress(scope, "offsets"), "begun", "1")

    async def offsets(self, scope: str, topic: str) -> dict[int, int] | None:
        """Where a rebuild of ``scope`` from ``topic`` stopped: the next offset per partition
        ({} if it stopped before its first batch was done); None if none is under way."""
        with translated("reading a rebuild's progress"):
            raw = await self._redis.hgetall(self._progress(scope, "offsets"))
        if not raw:
            return None
        found = {as_bytes(k).decode(): int(v) for k, v in raw.items()}
        return {int(k.rpartition(":")[2]): v for k, v in found.items() if k.startswith(topic + ":")}

    async def subjects_of(self, scope: str, fact_ids: Sequence[str]) -> dict[str, str]:
        """The subjects facts seen earlier in this rebuild belong to."""
        if not fact_ids:
            return {}
        with translated("reading a rebuild's progress"):
            found = await self._redis.hmget(self._progress(scope, "subjects"), list(fact_ids))
        return {
            f: as_bytes(s).decode() for f, s in zip(fact_ids, found, strict=True) if s is not None
        }

    async def advance(
        self, scope: str, topic: str, offsets: Mapping[int, int], subjects: Mapping[str, str]
    ) -> None:
        """Record a batch as done: the offsets after it and the subjects of its facts."""
        with translated("recording a rebuild's progress"):
            async with self._redis.pipeline(transaction=True) as pipe:
                if subjects:
                    seen = [part for pair in subjects.items() for part in pair]
                    pipe.hset(self._progress(scope, "subjects"), items=seen)
                ends = [part for p, o in offsets.items() for part in (f"{topic}:{p}", o)]
                pipe.hset(self._progress(scope, "offsets"), items=ends)
                await pipe.execute()

    async def finish(self, scope: str) -> None:
        """Forget the progress of a complete rebuild: the next one starts from the beginning."""
        with translated("finishing a rebuild"):
            await self._redis.delete(
                self._progress(scope, "offsets"), self._progress(scope, "subjects")
            )
