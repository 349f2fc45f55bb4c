"""A subject's rows as its facts' lives change them: archived, restored, erased, counted.

``archive`` moves facts' rows (with their vectors) to the cold tier,
``<prefix>_cold_<model>``, created on first use and searched only when asked;
``restore`` moves them back. A move copies, makes the copy durable, and only
then deletes: a crash in between leaves the row in both tiers, never in
neither. During a migration the other collection keeps the hot tier's rows
only: an archive deletes them there, a restore writes them there again.

Deletes cover every collection of the prefix holding subjects' rows (every
model, both tiers) and the buffer, under the index's lock so no write of the
subject's rows can land after the delete.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence

from slotwise.processors.model import VectorRow
from slotwise.sinks.milvus.client import MilvusLink
from slotwise.sinks.milvus.collections import FIELDS, among, of_subject, subject_collections
from slotwise.sinks.milvus.engine import read_category, write_rows
from slotwise.sinks.milvus.space import IndexSpace
from slotwise.sinks.milvus.writes import RowBuffer

__all__ = ["SubjectRows"]


def _filter(subject_id: str, fact_ids: Collection[str] | None) -> str:
    """The subject's rows, only those of ``fact_ids`` if given."""
    where = of_subject(subject_id)
    return where if fact_ids is None else f"{where} and {among(fact_ids)}"


class SubjectRows:
    def __init__(
        self,
        link: MilvusLink,
        lock: asyncio.Lock,
        space: IndexSpace,
        buffer: RowBuffer,
        *,
        prefix: str,
    ) -> None:
        self._link = link
        self._lock = lock
        self._space = space
        self._buffer = buffer
        self._prefix = prefix

    async def archive(self, subject_id: str, fact_ids: Sequence[str]) -> int:
        """Move facts of the subject to the cold tier (their vectors are kept); rows moved."""
        await self._buffer.flush_facts(set(fact_ids))
        source = await self._space.current()
        moved = await self._move(subject_id, fact_ids, source, self._space.cold_collection)
        shadow = await self._buffer.shadow()
        if shadow is not None and moved:
            # The other collection of a migration keeps the hot tier's rows only.
            where = _filter(subject_id, [r.fact_id for r in moved])
            client = await self._link.connect()
            await self._link.call(client.delete, shadow.collection, filter=where)
        return len(moved)

    async def restore(self, subject_id: str, fact_ids: Sequence[str]) -> int:
        """Move archived facts of the subject back to the current collection; rows moved."""
        target = await self._space.current()
        moved = await self._move(subject_id, fact_ids, self._space.cold_collection, target)
        if moved and await self._buffer.shadow() is not None:
            # Written again through the buffer, so the migration's other collection has them.
            self._buffer.add(moved)
            await self._buffer.flush()
        return len(moved)

    async def delete(
        self, subject_id: str, fact_ids: Collection[str] | None, *, flush: bool
    ) -> int:
        """Delete the subject's rows (only ``fact_ids``' if given) from every collection and
        the buffer; ``flush`` each collection after (durable at once). Rows deleted."""
        where = _filter(subject_id, fact_ids)
        # Under the lock, so no write of the subject's rows can land after the delete.
        async with self._lock:
            dropped = self._buffer.drop(subject_id, fact_ids)
            client = await self._link.connect()
            deleted = 0
            for name in await self._link.call(self._subject_collections):
                deleted += await self._link.call(self._link.count, name, where)
                await self._link.call(client.delete, name, filter=where)
                if flush:
                    await self._link.call(client.flush, name)
        return deleted + dropped

    async def count(self, subject_id: str) -> int:
        """Rows of the subject anywhere, buffered ones included: zero after an erasure."""
        buffered = len(self._buffer.of_subject(subject_id))
        await self._link.connect()
        where = _filter(subject_id, None)
        found = 0
        for name in await self._link.call(self._subject_collections):
            found += await self._link.call(self._link.count, name, where)
        return found + buffered

    def _subject_collections(self) -> list[str]:
        """Every collection of this prefix with a subject_id field: all models, both tiers."""
        return subject_collections(self._link.client(), self._prefix)

    async def _move(
        self, subject_id: str, fact_ids: Sequence[str], source: str, target: str
    ) -> list[VectorRow]:
        if not fact_ids:
            return []
        async with self._lock:
            return await self._link.call(self._move_sync, subject_id, fact_ids, source, target)

    def _move_sync(
        self, subject_id: str, fact_ids: Sequence[str], source: str, target: str
    ) -> list[VectorRow]:
        client = self._link.client()
        timeout = self._link.timeout_s
        if not client.has_collection(source):
            return []
        if not client.has_collection(target):
            self._space.create_sync(target)
        rows = self._link.query(
            source, where=_filter(subject_id, fact_ids), output_fields=[*FIELDS, "vector"]
        )
        if not rows:
            return []
        # Copy, make it durable, and only then delete: a crash in between
        # leaves the row in both tiers, never in neither.
        write_rows(client, target, rows, timeout_s=timeout)
        client.flush(target, timeout=timeout)
        moved = _filter(subject_id, [str(r["fact_id"]) for r in rows])
        client.delete(source, filter=moved, timeout=timeout)
        client.flush(source, timeout=timeout)
        return [
            VectorRow(
                fact_id=str(r["fact_id"]),
                subject_id=str(r["subject_id"]),
                text=str(r["text"]),
                category=read_category(r),
            )
            for r in rows
        ]
