"""The index's writes: rows buffered until a flush, embedded and upserted off the event loop.

``add()`` does no I/O; ``flush()`` embeds and upserts every buffered row and
keeps the buffer if anything fails, so the worker's commit fails with it.
Milvus Lite searches un-flushed rows by brute force over its memtable, so a
Milvus ``flush`` is issued every ``flush_every`` rows written
(``python -m slotwise.loadtest.milvus_flush`` measures the trade-off), but at
most once every ``min_flush_interval_s``: a flush costs Milvus Lite 100-400 ms
of CPU whatever its size, so at a thousand rows a second a flush per 250 rows
spent more CPU than the worker itself (3.3 ms per row against 0.3 ms
unflushed, measured in docs/performance.md), while a flush a second bounds the
memtable to one second of writes. A Milvus server gets no cadence flush
(``engine.py``): it searches its growing segments and seals them itself.

During a dual-index migration every write also goes to the pair's other
collection, embedded by the other model (``shadow.py``): the buffer asks its
``DualWrite`` before each write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

from pymilvus import MilvusClient, MilvusException

from slotwise.processors.model import VectorRow
from slotwise.processors.ports import Embedder
from slotwise.sinks.exceptions import VectorIndexError
from slotwise.sinks.milvus.client import MilvusLink
from slotwise.sinks.milvus.collections import fit_text
from slotwise.sinks.milvus.engine import engine_traits, write_rows
from slotwise.sinks.milvus.shadow import DualWrite, Shadow
from slotwise.sinks.milvus.space import IndexSpace

__all__ = ["RowBuffer"]


class RowBuffer:
    """The rows waiting for the next flush, by fact id, and the writing of them.

    ``lock`` is the index's: a write holds it while it upserts, so no delete of a
    subject's rows can interleave with the write of them.
    """

    def __init__(
        self,
        link: MilvusLink,
        lock: asyncio.Lock,
        space: IndexSpace,
        *,
        dual_write: DualWrite | None,
        batch_size: int,
        flush_every: int,
        min_flush_interval_s: float,
        monotonic: Callable[[], float],
    ) -> None:
        self._link = link
        self._lock = lock
        self._space = space
        self._dual_write = dual_write
        self._batch_size = batch_size
        self._flush_every = flush_every
        self._min_flush_interval_s = min_flush_interval_s
        self._monotonic = monotonic
        self._flushed_at = monotonic()
        self._unflushed = 0
        self._pending: dict[str, VectorRow] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, rows: Iterable[VectorRow]) -> None:
        """Buffer rows to index at the next ``flush()``; a later row of a fact replaces it."""
        for row in rows:
            self._pending[row.fact_id] = row

    async def flush(self) -> None:
        """Embed and upsert every buffered row; on failure raise and keep them buffered."""
        await self.write(list(self._pending.values()))

    async def flush_facts(self, fact_ids: Collection[str]) -> None:
        """:meth:`flush` for the buffered rows of ``fact_ids`` only."""
        await self.write([r for r in self._pending.values() if r.fact_id in fact_ids])

    def of_subject(
        self, subject_id: str, fact_ids: Collection[str] | None = None
    ) -> list[VectorRow]:
        """The subject's buffered rows (only ``fact_ids``' if given)."""
        return [
            r
            for r in self._pending.values()
            if r.subject_id == subject_id and (fact_ids is None or r.fact_id in fact_ids)
        ]

    def drop(self, subject_id: str, fact_ids: Collection[str] | None = None) -> int:
        """Drop the subject's buffered rows (only ``fact_ids``' if given); rows dropped.
        Without the lock: for a caller holding it."""
        doomed = [r.fact_id for r in self.of_subject(subject_id, fact_ids)]
        for fact_id in doomed:
            del self._pending[fact_id]
        return len(doomed)

    async def discard(self, subject_id: str, fact_ids: Collection[str] | None = None) -> int:
        """:meth:`drop` under the lock, so a write of them already under way has landed
        when this returns (and can be deleted) and none starts later."""
        async with self._lock:
            return self.drop(subject_id, fact_ids)

    async def shadow(self) -> Shadow | None:
        """Where the rows written now must also go (a migration's other collection)."""
        if self._dual_write is None:
            return None
        return await self._dual_write.shadow(await self._space.current())

    async def write(self, rows: list[VectorRow]) -> None:
        if not rows:
            return
        shadow = await self.shadow()
        # Embedding is the slow part: done outside the lock, so a commit's
        # flush does not hold up every subject's search for its whole length.
        vectors = await self._link.in_thread(self._embed_sync, self._space.embedder, rows)
        twins = (
            await self._link.in_thread(self._embed_sync, shadow.embedder, rows)
            if shadow
            else vectors
        )
        async with self._lock:
            collection = await self._space.ready()
            # A row replaced (or erased) while it was being embedded is not
            # written: its newer version is written by whoever holds it, and a
            # late write of the old one would overwrite it.
            fresh = [
                (row, vector, twin)
                for row, vector, twin in zip(rows, vectors, twins, strict=True)
                if self._pending.get(row.fact_id) is row
            ]
            try:
                await self._link.in_thread(
                    self._upsert_sync, collection, [(r, v) for r, v, _ in fresh], self._space.stamp
                )
                if shadow is not None:
                    # After the own collection: a failure here keeps the rows buffered
                    # and the retry writes both again (an upsert by fact id).
                    await self._link.in_thread(
                        self._write_sync,
                        shadow.collection,
                        [(r, t) for r, _, t in fresh],
                        shadow.embedder.model_name,
                    )
            except MilvusException as exc:
                raise VectorIndexError(
                    f"writing {len(fresh)} rows to {collection} failed: {exc}",
                    pending=len(self._pending),
                ) from exc
            for row, _, _ in fresh:
                if self._pending.get(row.fact_id) is row:
                    del self._pending[row.fact_id]

    # The *_sync methods run in the link's threads.

    def _embed_sync(self, embedder: Embedder, rows: list[VectorRow]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for first in range(0, len(rows), self._batch_size):
            batch = rows[first : first + self._batch_size]
            vectors += embedder.embed([r.text for r in batch])
        return vectors

    def _upsert_sync(
        self, collection: str, rows: list[tuple[VectorRow, list[float]]], model: str
    ) -> None:
        """Upsert into the index's own collection, counting the rows toward its flush
        cadence on Lite. A server searches its growing segments and seals them itself; a
        flush there is a synchronous seal-and-persist that only slows the writer."""
        client = self._link.client()
        lite = engine_traits(client).lite
        for data in self._batches(rows, model):
            write_rows(client, collection, data, timeout_s=self._link.timeout_s)
            if lite:
                self._count_toward_flush(client, collection, len(data))

    def _write_sync(
        self, collection: str, rows: list[tuple[VectorRow, list[float]]], model: str
    ) -> None:
        """Upsert into a migration's shadow collection, which its migration flushes."""
        client = self._link.client()
        for data in self._batches(rows, model):
            write_rows(client, collection, data, timeout_s=self._link.timeout_s)

    def _batches(
        self, rows: list[tuple[VectorRow, list[float]]], model: str
    ) -> Iterator[list[dict[str, Any]]]:
        for first in range(0, len(rows), self._batch_size):
            yield [
                {
                    "fact_id": r.fact_id,
                    "subject_id": r.subject_id,
                    "embedding_model": model,
                    "category": r.category,
                    "text": fit_text(r.text),
                    "vector": vector,
                }
                for r, vector in rows[first : first + self._batch_size]
            ]

    def _count_toward_flush(self, client: MilvusClient, collection: str, written: int) -> None:
        self._unflushed += written
        now = self._monotonic()
        due = now - self._flushed_at >= self._min_flush_interval_s
        if self._unflushed >= self._flush_every and due:
            client.flush(collection, timeout=self._link.timeout_s)
            self._unflushed = 0
            self._flushed_at = now
