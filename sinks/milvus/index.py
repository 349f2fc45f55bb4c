"""Fact vectors in Milvus: one collection per embedding model, searched within one subject.

Layout (``collections.py``):

* ``<prefix>_<model-slug>_<yyyymmdd>`` — the facts of one embedding model,
  created on first ``setup()`` and reached through the alias (default
  ``facts_current``). The model's name is stamped on every row and in the
  collection's properties; ``setup()`` refuses a collection of another model
  unless a drift adapter joins the pair (``space.py``).
* ``<prefix>_cold_<model-slug>`` — archived facts of that model, created on
  first ``archive()``; searched only when asked.

:class:`MilvusIndex` is what the worker holds: a sink (``add``/``flush``,
``writes.py``), a ``VectorSearch`` (``nearest``, ``search.py``) and the
lifecycle of a subject's rows (archive, restore, erase, count:
``subject_rows.py``), over one Milvus client and its threads (``client.py``)
and one lock that orders writes, moves and deletes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, datetime

from pymilvus.client.utils import SciPyHelper

from slotwise.processors.drift_adapter import DriftAdapter
from slotwise.processors.model import Tier, VectorRow
from slotwise.processors.ports import Embedder
from slotwise.sinks.milvus.client import MilvusLink
from slotwise.sinks.milvus.collections import GRPC_OPTIONS
from slotwise.sinks.milvus.embed_batch import EmbeddingBatch
from slotwise.sinks.milvus.search import FOREIGN_RESULTS, SubjectSearch
from slotwise.sinks.milvus.shadow import DualWrite
from slotwise.sinks.milvus.space import IndexSpace
from slotwise.sinks.milvus.subject_rows import SubjectRows
from slotwise.sinks.milvus.writes import RowBuffer

__all__ = ["FOREIGN_RESULTS", "GRPC_OPTIONS", "MilvusIndex"]


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
        self._uri = uri
        # Its own threads: searches waiting on Milvus or embedding must not
        # queue behind (or hold up) other blocking work of the process.
        self._link = MilvusLink(uri, token=token, timeout_s=timeout_s, threads=threads)
        self._lock = asyncio.Lock()
        self._space = IndexSpace(
            self._link,
            self._lock,
            embedder,
            adapter=adapter,
            alias=alias,
            prefix=prefix,
            clock=clock,
        )
        self._buffer = RowBuffer(
            self._link,
            self._lock,
            self._space,
            dual_write=dual_write,
            batch_size=batch_size,
            flush_every=flush_every,
            min_flush_interval_s=min_flush_interval_s,
            monotonic=monotonic,
        )
        queries = EmbeddingBatch(self._space.embedder, self._link.executor)
        self._search = SubjectSearch(self._link, self._space, self._buffer, queries)
        self._rows = SubjectRows(self._link, self._lock, self._space, self._buffer, prefix=prefix)
        # pymilvus loads scipy.sparse on its first insert or search, by executing the module
        # outside the import lock: two threads doing it at once fail on a half-initialised
        # module ("partially initialized module 'scipy.sparse._bsr'"). Load it here, once.
        SciPyHelper.is_scipy_sparse(())

    @property
    def collection(self) -> str | None:
        """The collection this index writes, once set up."""
        return self._space.collection

    @property
    def space(self) -> str:
        """The model whose vector space this index searches: the adapter's target, if any."""
        return self._space.model

    @property
    def space_embedder(self) -> Embedder:
        """Vectors in that space: the embedder's, mapped through the adapter if there is one."""
        return self._space.embedder

    @property
    def stamp(self) -> str:
        """What the rows this index writes carry as ``embedding_model``."""
        return self._space.stamp

    @property
    def cold_collection(self) -> str:
        return self._space.cold_collection

    @property
    def pending(self) -> int:
        return len(self._buffer)

    async def setup(self) -> None:
        """Connect, and create the model's collection and the alias if the alias is missing."""
        async with self._lock:
            await self._space.ready()

    async def close(self) -> None:
        await self._link.close()

    # -- the sink -------------------------------------------------------------

    def add(self, rows: Iterable[VectorRow]) -> None:
        """Buffer rows to index at the next ``flush()``; a later row of a fact replaces it."""
        self._buffer.add(rows)

    async def flush(self) -> None:
        """Embed and upsert every buffered row; on failure raise and keep them buffered."""
        await self._buffer.flush()

    # -- VectorSearch ---------------------------------------------------------

    async def nearest(
        self,
        subject_id: str,
        text: str,
        *,
        k: int,
        floor: float,
        exclude: Collection[str] = (),
        tier: Tier = "hot",
    ) -> list[tuple[str, float]]:
        """``SubjectSearch.nearest``: up to ``k`` ``(fact_id, cosine)`` of this subject only."""
        return await self._search.nearest(
            subject_id, text, k=k, floor=floor, exclude=exclude, tier=tier
        )

    # -- lifecycle: cold tier, erasure ----------------------------------------

    async def archive(self, subject_id: str, fact_ids: Sequence[str]) -> int:
        """Move facts of the subject to the cold tier (their vectors are kept); rows moved."""
        return await self._rows.archive(subject_id, fact_ids)

    async def restore(self, subject_id: str, fact_ids: Sequence[str]) -> int:
        """Move archived facts of the subject back to the current collection; rows moved."""
        return await self._rows.restore(subject_id, fact_ids)

    async def delete_subject(self, subject_id: str) -> int:
        """Delete the subject's rows from every model's collection, both tiers and the buffer."""
        return await self._rows.delete(subject_id, None, flush=True)

    async def delete_facts(self, subject_id: str, fact_ids: Collection[str]) -> int:
        """:meth:`delete_subject` for the rows of ``fact_ids`` only, unflushed (a delete is
        acknowledged once in the write-ahead log; a flush costs a Milvus Lite 100-400 ms)."""
        return await self._rows.delete(subject_id, fact_ids, flush=False) if fact_ids else 0

    async def discard(self, subject_id: str, fact_ids: Collection[str] | None = None) -> int:
        """Drop the subject's buffered rows (only ``fact_ids``' if given) unwritten.

        Takes the lock, so a write of them already under way has landed when this
        returns (and can be deleted) and none starts later. Rows dropped.
        """
        return await self._buffer.discard(subject_id, fact_ids)

    def buffered(self, subject_id: str, fact_ids: Collection[str] | None = None) -> int:
        """The subject's rows (only ``fact_ids``' if given) buffered for the next flush."""
        return len(self._buffer.of_subject(subject_id, fact_ids))

    async def count_subject(self, subject_id: str) -> int:
        """Rows of the subject anywhere, buffered ones included: zero after an erasure."""
        return await self._rows.count(subject_id)
