"""What the store holds of the committed log: the offsets each commit covered.

Before each Kafka commit the checkpoint records, in Redis, the next offset of
every partition the commit covers, after the applies of the events it commits
(and before ``WAIT``, so a replica holds it with them). Redis keeps its writes
in one order (the AOF, the replication stream), so a store that comes back
missing its last writes — a restart from an AOF short of its last second, a
failover to a replica that lagged — has lost the later marks with the later
applies: its mark for a partition is then below the group's committed offset,
and every event from the mark on may be missing. The worker compares the two
when it is assigned a partition and replays from the mark (``streams/runtime/worker.py``).

A commit's marks are recorded only over marks at least as high as the ones its
writer recorded last (``lua/record_marks.lua``): on a store that came back
behind under a running worker, the next commit would otherwise overwrite the
very marks that say how far behind it is. It is refused instead, and the
worker replays (``streams/runtime/checkpoint.py``).

    <prefix>:commits:<group>  hash  "<topic>:<partition>" → next offset

Deliberately without a hash tag: ``<prefix>:{<tag>}:`` names a subject's keys,
and a subject may be called "commits" (its erasure would take the marks along).
One key, so Redis Cluster needs no tag to keep it on one slot.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import redis.asyncio as aioredis

from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import KeyLayout
from slotwise.sinks.redis.scripts import lua_script

__all__ = ["CommitMarks"]


class CommitMarks:
    def __init__(self, client: aioredis.Redis, *, prefix: str, group: str) -> None:
        self._redis = client
        self._key = KeyLayout(prefix).commit_marks(group)
        self._record = client.register_script(lua_script("record_marks.lua"))

    async def record(
        self,
        offsets: Mapping[tuple[str, int], int],
        last: Mapping[tuple[str, int], int] | None = None,
    ) -> set[tuple[str, int]]:
        """Record ``offsets``, unless a partition's stored mark is missing or below the one
        in ``last`` (what this writer recorded before): then nothing, and those partitions."""
        if not offsets:
            return set()
        before = last or {}
        fields = {f"{t}:{p}": (t, p) for t, p in offsets}
        args = [
            part for name, tp in fields.items() for part in (name, before.get(tp, -1), offsets[tp])
        ]
        with translated("recording committed offsets"):
            behind = await self._record(keys=[self._key], args=args)
        return {fields[name.decode()] for name in behind}

    async def probe(self) -> None:
        """One round trip: on a connection opened anew it tells the store's identity
        which server answers (``sinks/redis/identity.py``)."""
        with translated("probing the store"):
            await self._redis.ping()

    async def known(self) -> bool:
        """Whether the store holds a mark of this group at all: a store that knows the
        group but lacks one partition's mark has lost it, with the writes after it."""
        with translated("reading committed offsets"):
            return bool(await self._redis.exists(self._key))

    async def read(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The recorded next offset of each partition that has one."""
        wanted = list(partitions)
        if not wanted:
            return {}
        with translated("reading committed offsets"):
            found = await self._redis.hmget(self._key, [f"{t}:{p}" for t, p in wanted])
        return {tp: int(o) for tp, o in zip(wanted, found, strict=True) if o is not None}
