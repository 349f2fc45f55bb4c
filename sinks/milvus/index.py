"""Fact vectors in Milvus: one collection per embedding model, searched within one subject.

Layout (DESIGN §5):

* ``<prefix>_<model-slug>_<yyyymmdd>`` — the facts of one embedding model,
  created on first ``setup()`` and reached through the alias (default
  ``facts_current``). The model's name is stamped on every row and in the
  collection's properties; ``setup()`` refuses a collection of another model.
* ``<prefix>_cold_<model-slug>`` — archived facts of that model, created on
  first ``archive()``; searched only when asked.

The alias is resolved once, at ``setup()``: after an alias swap a worker still
running the old model keeps writing its own model's collection instead of
mixing two vector spaces in the new one.

Searches are version-checked: ``setup()`` refuses a collection whose stamp is
not the embedder's model, naming both — a new-model query against an
old-model index returns near-random neighbours, silently — unless a drift
adapter joining exactly that pair is given (``processors/drift_adapter.py``).
Then every vector this index computes, queries and written rows alike, is
embedded by the new model and mapped into the collection's space, and the
rows it writes are stamped with the adapter's stamp
(``new>old:kind:version``), not the old model's name: they are not the old
model's vectors, and a migration must be able to tell.

During a dual-index migration every write also goes to the pair's other
collection, embedded by the other model (``milvus_shadow.py``): the index
asks its ``DualWrite`` before each write, and archive and restore keep that
collection's hot rows in step.

Writes buffer: ``add()`` does no I/O, ``flush()`` embeds and upserts off the
event loop and keeps the buffer if anything fails, so the worker's commit
fails with it. Milvus Lite searches un-flushed rows by brute force over its
memtable, so a Milvus ``flush`` is issued every ``flush_every`` rows written
(``python -m slotwise.loadtest.milvus_flush`` measures the trade-off), but at most once
every ``min_flush_interval_s``: a flush costs Milvus Lite 100-400 ms of CPU
whatever its size, so at a thousand rows a second a flush per 250 rows spent
more CPU than the worker itself (3.3 ms per row against 0.3 ms unflushed,
measured in docs/performance.md), while a flush a second bounds the memtable
to one second of writes. A Milvus server gets no cadence flush (sinks/milvus/engine.py).

Every search filters on ``subject_id`` (the partition key) and then drops any
hit of another subject anyway, counting it: a subject must never see another
subject's facts. Milvus finds the rows; their cosines are computed here, from
the vectors Milvus returns and those of the subject's buffered rows alike, so
a ranking never depends on whether a row was written yet (a crash and a replay
write at other moments) and a search writes nothing: single-row upserts ahead
of every search held the write lock and cost Milvus Lite ~5 ms of CPU each,
which put seconds of queueing on the vector stage under load.

Names, schema and filters: ``milvus_collections.py``.
"""

from __future__ import annotations

import asyncio
import functools
import math
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np
from prometheus_client import Counter
from pymilvus import MilvusClient, MilvusException
from pymilvus.client.utils import SciPyHelper

from slotwise.processors.drift_adapter import AdaptedEmbedder, AdapterError, DriftAdapter
from slotwise.processors.model import VectorRow
from slotwise.processors.ports import Embedder
from slotwise.sinks.exceptions import EmbeddingModelMismatch, VectorIndexError
from slotwise.sinks.milvus.collections import (
    FIELDS,
    GRPC_OPTIONS,
    READ_CONSISTENCY,
    TEXT_BYTES,
    among,
    check_model,
    cold_collection_name,
    collection_name,
    create_collection,
    of_subject,
    subject_collections,
)
from slotwise.sinks.milvus.embed_batch import EmbeddingBatch
from slotwise.sinks.milvus.engine import engine_traits, hit_fact_id, read_category, write_rows
from slotwise.sinks.milvus.shadow import DualWrite, Shadow

__all__ = ["FOREIGN_RESULTS", "GRPC_OPTIONS", "MilvusIndex"]

FOREIGN_RESULTS = Counter(
    "slotwise_vector_foreign_results_total",
    "Vector hits of another subject dropped after a subject-filtered search",
)

_NOT_LOADED = 101  # Milvus's CollectionNotLoaded
_SETUP_ATTEMPTS = 5

T = TypeVar("T")


def _fit(text: str, limit: int) -> str:
    raw = text.encode()
    return text if len(raw) <= limit else raw[:limit].decode(errors="ignore")


def _cosine(query: np.ndarray, vector: Sequence[float]) -> float:
    row = np.asarray(vector, dtype=np.float32)
    norms = float(np.linalg.norm(query)) * float(np.linalg.norm(row))
    return float(np.dot(query, row)) / norms if norms else -math.inf


def _filter(subject_id: str, fact_ids: Collection[str] | None) -> str:
    """The subject's rows, only those of ``fact_ids`` if given."""
    where = of_subject(subject_id)
    return where if fact_ids is None else f"{where} and {among(fact_ids)}"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class MilvusIndex:
    """Implements ``slotwise.processors.ports.VectorSearch``; a sink with ``add``/``flush``."""

    def __init__(
        self,
        uri: str,
        embedder: Embedder,
        *,
        token: str | None = None,
        alias: str = "facts_current",
        prefix: str = "facts",
        flush_every: int = 250,
        min_flush_interval_s: float = 1.0,
        batch_size: int = 64,
        threads: int = 8,
        timeout_s: float = 10.0,
        clock: Callable[[], datetime] = _utc_now,
        monotonic: Callable[[], float] = time.monotonic,
        adapter: DriftAdapter | None = None,
        dual_write: DualWrite | None = None,
    ) -> None:
        if flush_every < 1 or batch_size < 1:
            raise ValueError("flush_every and batch_size must be at least 1")
        self._adapter = adapter
        self._dual_write = dual_write
        try:
            self._space_embedder = (
                embedder if adapter is None else AdaptedEmbedder(embedder, adapter)
            )
        except AdapterError as exc:
            raise EmbeddingModelMismatch(str(exc)) from exc
        self._uri = uri
        self._token = token or ""
        self._embedder = embedder
        self._alias = alias
        self._prefix = prefix
        self._flush_every = flush_every
        self._batch_size = batch_size
        self._timeout_s = timeout_s
        self._clock = clock
        self._client: MilvusClient | None = None
        self._collection: str | None = None
        self._pending: dict[str, VectorRow] = {}
        self._unflushed = 0
        self._min_flush_interval_s = min_flush_interval_s
        self._monotonic = monotonic
        self._flushed_at = monotonic()
        self._lock = asyncio.Lock()
        # Its own threads: searches waiting on Milvus or embedding must not
        # queue behind (or hold up) other blocking work of the process.
        self._threads = ThreadPoolExecutor(threads, thread_name_prefix="slotwise-milvus")
        # Concurrent searches embed their texts in one call (sinks/milvus/embed_batch.py).
        self._queries = EmbeddingBatch(self._space_embedder, self._threads)
        # pymilvus loads scipy.sparse on its first insert or search, by executing the module
        # outside the import lock: two threads doing it at once fail on a half-initialised
        # module ("partially initialized module 'scipy.sparse._bsr'"). Load it here, once.
        SciPyHelper.is_scipy_sparse(())

    @property
    def collection(self) -> str | None:
        """The collection this index writes, once set up."""
        return self._collection

    @property
    def space(self) -> str:
        """The model whose vector space this index searches: the adapter's target, if any."""
        return self._space_embedder.model_name

    @property
    def space_embedder(self) -> Embedder:
        """Vectors in that space: the embedder's, mapped through the adapter if there is one."""
        return self._space_embedder

    @property
    def stamp(self) -> str:
        """What the rows this index writes carry as ``embedding_model``."""
        return self._adapter.stamp if self._adapter else self._embedder.model_name

    @property
    def cold_collection(self) -> str:
        return cold_collection_name(self._prefix, self.space)

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def setup(self) -> None:
        """Connect, and create the model's collection and the alias if the alias is missing."""
        async with self._lock:
            await self._ready()

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await self._in_thread(client.close)
        self._threads.shutdown(wait=False)

    # -- the sink -------------------------------------------------------------

    def add(self, rows: Iterable[VectorRow]) -> None:
        """Buffer rows to index at the next ``flush()``; a later row of a fact replaces it."""
        for row in rows:
            self._pending[row.fact_id] = row

    async def flush(self) -> None:
        """Embed and upsert every buffered row; on failure raise and keep them buffered."""
        await self._write(list(self._pending.values()))

    # -- VectorSearch ---------------------------------------------------------

    async def nearest(
        self,
        subject_id: str,
        text: str,
        *,
        k: int,
        floor: float,
        exclude: Collection[str] = (),
        archived: bool = False,
    ) -> list[tuple[str, float]]:
        """Up to ``k`` ``(fact_id, cosine)`` of this subject only, best first, cosine ≥ floor,
        none of ``exclude``.

        The subject's buffered rows take part, so a search sees the subject's
        own earlier writes. ``archived`` searches the cold tier. ``exclude`` is
        applied by Milvus, so the excluded rows take no place among the ``k``.
        """
        skip = set(exclude)
        buffered = (
            []
            if archived
            else [
                r
                for r in self._pending.values()
                if r.subject_id == subject_id and r.fact_id not in skip
            ]
        )
        if archived:
            client = await self._connected()
            if not await self._call(client.has_collection, self.cold_collection):
                return []
            collection = self.cold_collection
        else:
            collection = await self._current_collection()
        vectors = await self._queries.embed([text, *(r.text for r in buffered)])
        hits = await self._call(
            self._search_sync, collection, subject_id, vectors[0], k + len(buffered), skip
        )
        query = np.asarray(vectors[0], dtype=np.float32)
        # A buffered row is newer than its fact's row in Milvus: it replaces it.
        rows = {r.fact_id: vector for r, vector in zip(buffered, vectors[1:], strict=True)}
        for hit in hits:
            entity = hit["entity"]
            if entity.get("subject_id") != subject_id:
                FOREIGN_RESULTS.inc()
            else:
                rows.setdefault(hit_fact_id(hit), entity["vector"])
        scored = [(fact_id, _cosine(query, vector)) for fact_id, vector in rows.items()]
        found = sorted((h for h in scored if h[1] >= floor), key=lambda h: (-h[1], h[0]))
        return found[:k]

    # -- lifecycle: cold tier, erasure ----------------------------------------

    async def archive(self, subject_id: str, fact_ids: Sequence[str]) -> int:
        """Move facts of the subject to the cold tier (their vectors are kept); rows moved."""
        await self._write([r for r in self._pending.values() if r.fact_id in set(fact_ids)])
        source = await self._current_collection()
        moved = await self._move(subject_id, fact_ids, source, self.cold_collection)
        shadow = await self._shadow()
        if shadow is not None and moved:
            # The other collection of a migration keeps the hot tier's rows only.
            where = _filter(subject_id, [r.fact_id for r in moved])
            client = await self._connected()
            await self._call(client.delete, shadow.collection, filter=where)
        return len(moved)

    async def restore(self, subject_id: str, fact_ids: Sequence[str]) -> int:
        """Move archived facts of the subject back to the current collection; rows moved."""
        target = await self._current_collection()
        moved = await self._move(subject_id, fact_ids, self.cold_collection, target)
        if moved and await self._shadow() is not None:
            # Written again through the buffer, so the migration's other collection has them.
            self.add(moved)
            await self.flush()
        return len(moved)

    async def delete_subject(self, subject_id: str) -> int:
        """Delete the subject's rows from every model's collection, both tiers and the buffer."""
        return await self._delete(subject_id, None, flush=True)

    async def delete_facts(self, subject_id: str, fact_ids: Collection[str]) -> int:
        """:meth:`delete_subject` for the rows of ``fact_ids`` only, unflushed (a delete is
        acknowledged once in the write-ahead log; a flush costs a Milvus Lite 100-400 ms)."""
        return await self._delete(subject_id, fact_ids, flush=False) if fact_ids else 0

    async def _delete(
        self, subject_id: str, fact_ids: Collection[str] | None, *, flush: bool
    ) -> int:
        where = _filter(subject_id, fact_ids)
        # Under the lock, so no write of the subject's rows can land after the delete.
        async with self._lock:
            dropped = self._drop_pending(subject_id, fact_ids)
            client = await self._connected()
            deleted = 0
            for name in await self._call(self._subject_collections):
                deleted += await self._call(self._count_sync, name, subject_id, fact_ids)
                await self._call(client.delete, name, filter=where)
                if flush:
                    await self._call(client.flush, name)
        return deleted + dropped

    async def discard(self, subject_id: str, fact_ids: Collection[str] | None = None) -> int:
        """Drop the subject's buffered rows (only ``fact_ids``' if given) unwritten.

        Takes the lock, so a write of them already under way has landed when this
        returns (and can be deleted) and none starts later. Rows dropped.
        """
        async with self._lock:
            return self._drop_pending(subject_id, fact_ids)

    def buffered(self, subject_id: str, fact_ids: Collection[str] | None = None) -> int:
        """The subject's rows (only ``fact_ids``' if given) buffered for the next flush."""
        return sum(
            1
            for r in self._pending.values()
            if r.subject_id == subject_id and (fact_ids is None or r.fact_id in fact_ids)
        )

    async def count_subject(self, subject_id: str) -> int:
        """Rows of the subject anywhere, buffered ones included: zero after an erasure."""
        buffered = sum(1 for r in self._pending.values() if r.subject_id == subject_id)
        await self._connected()
        found = 0
        for name in await self._call(self._subject_collections):
            found += await self._call(self._count_sync, name, subject_id)
        return found + buffered

    # -- internals --------------------------------------------------------------

    async def _connected(self) -> MilvusClient:
        if self._client is None:
            self._client = await self._call(
                MilvusClient,
                uri=self._uri,
                token=self._token,
                timeout=self._timeout_s,
                grpc_options=GRPC_OPTIONS,
            )
        return self._client

    async def _current_collection(self) -> str:
        if self._collection is None:
            async with self._lock:
                return await self._ready()
        return self._collection

    async def _ready(self) -> str:
        # Called with the lock held.
        if self._collection is None:
            await self._connected()
            self._collection = await self._call(self._setup_sync)
        return self._collection

    async def _shadow(self) -> Shadow | None:
        if self._dual_write is None:
            return None
        return await self._dual_write.shadow(await self._current_collection())

    async def _write(self, rows: list[VectorRow]) -> None:
        if not rows:
            return
        shadow = await self._shadow()
        # Embedding is the slow part: done outside the lock, so a commit's
        # flush does not hold up every subject's search for its whole length.
        vectors = await self._in_thread(self._embed_sync, self._space_embedder, rows)
        twins = (
            await self._in_thread(self._embed_sync, shadow.embedder, rows) if shadow else vectors
        )
        async with self._lock:
            collection = await self._ready()
            # A row replaced (or erased) while it was being embedded is not
            # written: its newer version is written by whoever holds it, and a
            # late write of the old one would overwrite it.
            fresh = [
                (row, vector, twin)
                for row, vector, twin in zip(rows, vectors, twins, strict=True)
                if self._pending.get(row.fact_id) is row
            ]
            try:
                await self._in_thread(
                    self._upsert_sync, collection, [(r, v) for r, v, _ in fresh], self.stamp
                )
                if shadow is not None:
                    # After the own collection: a failure here keeps the rows buffered
                    # and the retry writes both again (an upsert by fact id).
                    await self._in_thread(
                        self._upsert_sync,
                        shadow.collection,
                        [(r, t) for r, _, t in fresh],
                        shadow.embedder.model_name,
                        cadence=False,
                    )
            except MilvusException as exc:
                raise VectorIndexError(
                    f"writing {len(fresh)} rows to {collection} failed: {exc}",
                    pending=len(self._pending),
                ) from exc
            for row, _, _ in fresh:
                if self._pending.get(row.fact_id) is row:
                    del self._pending[row.fact_id]

    def _drop_pending(self, subject_id: str, fact_ids: Collection[str] | None = None) -> int:
        doomed = [
            f
            for f, r in self._pending.items()
            if r.subject_id == subject_id and (fact_ids is None or f in fact_ids)
        ]
        for fact_id in doomed:
            del self._pending[fact_id]
        return len(doomed)

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return await self._in_thread(fn, *args, **kwargs)
        except MilvusException as exc:
            raise VectorIndexError(f"milvus at {self._uri}: {exc}") from exc

    async def _in_thread(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, functools.partial(fn, *args, **kwargs))

    def _require_client(self) -> MilvusClient:
        if self._client is None:
            raise VectorIndexError("the index is not connected: call setup() first")
        return self._client

    # The *_sync methods run in a worker thread.

    def _setup_sync(self) -> str:
        client = self._require_client()
        for attempt in range(_SETUP_ATTEMPTS):
            try:
                if self._alias not in client.list_aliases().get("aliases", []):
                    name = collection_name(self._prefix, self.space, self._clock())
                    if not client.has_collection(name):
                        self._create_sync(name)
                    client.create_alias(name, self._alias)
                break
            except MilvusException:
                # Replicas starting together race to create the same collection and
                # alias; the loser's call fails. Look again: the winner's is as good.
                if attempt == _SETUP_ATTEMPTS - 1:
                    raise
                time.sleep(0.2 * (attempt + 1))
        name = str(client.describe_alias(self._alias)["collection_name"])
        check_model(
            client,
            name,
            model=self.space,
            dimension=self._space_embedder.dimension,
            via=self._alias,
            querying=self._embedder.model_name,
        )
        client.load_collection(name, timeout=self._timeout_s)
        return name

    def _create_sync(self, name: str) -> None:
        create_collection(
            self._require_client(),
            name,
            model=self.space,
            dimension=self._space_embedder.dimension,
            timeout_s=self._timeout_s,
        )

    def _embed_sync(self, embedder: Embedder, rows: list[VectorRow]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for first in range(0, len(rows), self._batch_size):
            batch = rows[first : first + self._batch_size]
            vectors += embedder.embed([r.text for r in batch])
        return vectors

    def _upsert_sync(
        self,
        collection: str,
        rows: list[tuple[VectorRow, list[float]]],
        model: str,
        *,
        cadence: bool = True,
    ) -> None:
        """Upsert; ``cadence``: count the rows toward this index's Milvus flush cadence."""
        client = self._require_client()
        for first in range(0, len(rows), self._batch_size):
            batch = rows[first : first + self._batch_size]
            data = [
                {
                    "fact_id": r.fact_id,
                    "subject_id": r.subject_id,
                    "embedding_model": model,
                    "category": r.category,
                    "text": _fit(r.text, TEXT_BYTES),
                    "vector": vector,
                }
                for r, vector in batch
            ]
            write_rows(client, collection, data, timeout_s=self._timeout_s)
            # A server searches its growing segments and seals them itself; a flush
            # there is a synchronous seal-and-persist that only slows the writer.
            if not cadence or not engine_traits(client).lite:
                continue
            self._unflushed += len(batch)
            now = self._monotonic()
            due = now - self._flushed_at >= self._min_flush_interval_s
            if self._unflushed >= self._flush_every and due:
                client.flush(collection, timeout=self._timeout_s)
                self._unflushed = 0
                self._flushed_at = now

    def _search_sync(
        self,
        collection: str,
        subject_id: str,
        query: list[float],
        limit: int,
        exclude: Collection[str],
    ) -> list[dict[str, Any]]:
        """The query's hits among the subject's rows, with their vectors."""
        where = of_subject(subject_id)
        if exclude:
            where = f"{where} and not ({among(sorted(exclude))})"
        result = self._loaded(
            collection,
            lambda client: client.search(
                collection,
                data=[query],
                limit=limit,
                filter=where,
                output_fields=["subject_id", "vector"],
                search_params={"metric_type": "COSINE"},
                consistency_level=READ_CONSISTENCY,
                timeout=self._timeout_s,
            ),
        )
        return list(result[0])

    def _count_sync(
        self, collection: str, subject_id: str, fact_ids: Collection[str] | None = None
    ) -> int:
        where = _filter(subject_id, fact_ids)
        rows = self._loaded(
            collection,
            lambda client: client.query(
                collection,
                filter=where,
                output_fields=["count(*)"],
                consistency_level=READ_CONSISTENCY,
                timeout=self._timeout_s,
            ),
        )
        return int(rows[0]["count(*)"]) if rows else 0

    def _loaded(self, collection: str, call: Callable[[MilvusClient], T]) -> T:
        """Run a read, loading the collection first if Milvus has released it.

        Milvus Lite forgets which collections were loaded when it restarts.
        """
        client = self._require_client()
        try:
            return call(client)
        except MilvusException as exc:
            if exc.code != _NOT_LOADED:
                raise
        client.load_collection(collection, timeout=self._timeout_s)
        return call(client)

    def _subject_collections(self) -> list[str]:
        """Every collection of this prefix with a subject_id field: all models, both tiers."""
        return subject_collections(self._require_client(), self._prefix)

    async def _move(
        self, subject_id: str, fact_ids: Sequence[str], source: str, target: str
    ) -> list[VectorRow]:
        if not fact_ids:
            return []
        async with self._lock:
            moved: list[VectorRow] = await self._call(
                self._move_sync, subject_id, fact_ids, source, target
            )
        return moved

    def _move_sync(
        self, subject_id: str, fact_ids: Sequence[str], source: str, target: str
    ) -> list[VectorRow]:
        client = self._require_client()
        if not client.has_collection(source):
            return []
        if not client.has_collection(target):
            self._create_sync(target)
        where = _filter(subject_id, fact_ids)
        rows = self._loaded(
            source,
            lambda c: c.query(
                source,
                filter=where,
                output_fields=[*FIELDS, "vector"],
                consistency_level=READ_CONSISTENCY,
                timeout=self._timeout_s,
            ),
        )
        if not rows:
            return []
        # Copy, make it durable, and only then delete: a crash in between
        # leaves the row in both tiers, never in neither.
        write_rows(client, target, rows, timeout_s=self._timeout_s)
        client.flush(target, timeout=self._timeout_s)
        moved = _filter(subject_id, [str(r["fact_id"]) for r in rows])
        client.delete(source, filter=moved, timeout=self._timeout_s)
        client.flush(source, timeout=self._timeout_s)
        return [
            VectorRow(
                fact_id=str(r["fact_id"]),
                subject_id=str(r["subject_id"]),
                text=str(r["text"]),
                category=read_category(r),
            )
            for r in rows
        ]
