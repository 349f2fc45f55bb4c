"""The two tiers of fact vectors: each fact's row follows the status Redis gives it.

The hot tier is the index's collection (behind the alias), which the write
path's vector fetch and default searches read: current facts. The cold tier is
``<prefix>_cold_<model>`` of the same embedding model, searched only when
asked (``MilvusIndex.nearest(..., tier="cold")``): archived facts, and the
retired ones (superseded, history) once a forget pass has moved them.
:meth:`MilvusTiers.settle` puts a current fact's row in the hot tier and any
other's in the cold one, reading nothing but the facts it is given (their state in Redis,
which is the truth): a replay, or a pass settled twice, converges to the same
place.

*Crash safety.* A move copies the row to its new tier first and deletes it
from the old one after: a crash in between leaves it in both tiers (the vector
fetch filters by the Redis status meanwhile, as it filters superseded rows),
never in neither, and the replay's ``settle`` deletes the extra copy. Milvus
acknowledges an upsert once it is in its write-ahead log (Milvus Lite keeps one
too), so no flush is needed between copy and delete; tiers are flushed every
``flush_every`` rows written, at most once per ``min_flush_interval_s`` (a
Milvus Lite flush costs 100-400 ms of CPU whatever its size), which keeps the
memtable that every search scans small.

A row is copied with its vector when its text is the fact's; otherwise (the
fact's text changed while archived, or the row was never written) it is
embedded again from the fact's text.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pymilvus import MilvusClient

from slotwise.processors.model import Tier
from slotwise.processors.ports import Embedder
from slotwise.sinks.exceptions import VectorIndexError
from slotwise.sinks.milvus.client import MilvusLink, loaded
from slotwise.sinks.milvus.collections import (
    FIELDS,
    READ_CONSISTENCY,
    create_collection,
    fit_text,
    of_subject,
)
from slotwise.sinks.milvus.engine import write_rows
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.topics.records import Fact

__all__ = ["MilvusTiers", "Tier", "TierMoves", "archived_subject", "fit_text"]


_CHUNK = 256


@dataclass(frozen=True, slots=True)
class TierMoves:
    """What one ``settle`` did: rows written to each tier and deleted from each."""

    to_cold: int = 0
    to_hot: int = 0
    embedded: int = 0

    def __add__(self, other: TierMoves) -> TierMoves:
        return TierMoves(
            self.to_cold + other.to_cold, self.to_hot + other.to_hot, self.embedded + other.embedded
        )


class MilvusTiers:
    """Moves rows between ``index``'s collection and its cold tier (see the module docstring).

    ``embedder`` must be the index's (the same model embeds both tiers).
    """

    def __init__(
        self,
        index: MilvusIndex,
        embedder: Embedder,
        *,
        uri: str,
        token: str | None = None,
        timeout_s: float = 10.0,
        flush_every: int = 250,
        min_flush_interval_s: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._index = index
        self._embedder = embedder
        self._link = MilvusLink(uri, token=token, timeout_s=timeout_s, name="milvus tiers")
        self._timeout_s = timeout_s
        self._flush_every = flush_every
        self._min_flush_interval_s = min_flush_interval_s
        self._monotonic = monotonic
        self._flushed_at = monotonic()
        self._unflushed: dict[str, int] = {}
        self._lock = asyncio.Lock()

    @property
    def cold_collection(self) -> str:
        return self._index.cold_collection

    async def close(self) -> None:
        await self._link.close()

    async def settle(self, subject_id: str, facts: Sequence[Fact]) -> TierMoves:
        """Current facts' rows found in the cold tier back to the hot one; every other
        fact's row (archived, or retired: superseded, history) to the cold tier. Facts of
        another subject are left where they are."""
        return await self.settle_many([f for f in facts if f.subject_id == subject_id])

    async def settle_many(self, facts: Sequence[Fact]) -> TierMoves:
        """:meth:`settle` for facts of any number of subjects, in one pass over the tiers
        (a rebuild's batch)."""
        archived = [f for f in facts if f.status != "current"]
        current = [f for f in facts if f.status == "current"]
        if not archived and not current:
            return TierMoves()
        for subject_id in {f.subject_id for f in archived}:
            # A row still buffered for the hot tier would land there after the move.
            ids = {f.fact_id for f in archived if f.subject_id == subject_id}
            await self._index.discard(subject_id, ids)
        hot = await self._hot()
        async with self._lock:
            return await self._link.call(self._settle_sync, hot, archived, current)

    async def locate(self, fact_ids: Sequence[str]) -> dict[str, set[Tier]]:
        """The tiers each fact's row is in now (empty: in neither)."""
        hot = await self._hot()
        found: dict[str, set[Tier]] = {f: set() for f in fact_ids}
        for tier, name in (("hot", hot), ("cold", self.cold_collection)):
            rows = await self._link.call(self._get_sync, name, list(fact_ids), ["fact_id"])
            for fact_id in rows:
                found[fact_id].add(tier)  # type: ignore[arg-type]
        return found

    async def counts(self) -> dict[Tier, int]:
        """Rows in each tier."""
        hot = await self._hot()
        return {
            "hot": int(await self._link.call(self._count_sync, hot)),
            "cold": int(await self._link.call(self._count_sync, self.cold_collection)),
        }

    async def rows_of(self, subject_id: str) -> dict[Tier, dict[str, str]]:
        """The subject's rows in each tier: fact id → the row's text."""
        hot = await self._hot()
        return {
            "hot": await self._link.call(self._texts_sync, hot, subject_id),
            "cold": await self._link.call(self._texts_sync, self.cold_collection, subject_id),
        }

    async def subject_of(self, fact_id: str) -> str | None:
        """The subject of an archived fact, from its cold-tier row (None if not there)."""
        rows = await self._link.call(
            self._get_sync, self.cold_collection, [fact_id], ["subject_id"]
        )
        row = rows.get(fact_id)
        return None if row is None else str(row["subject_id"])

    # -- internals (the *_sync methods run in a worker thread) ---------------------

    async def _hot(self) -> str:
        if self._index.collection is None:
            await self._index.setup()
        name = self._index.collection
        if name is None:
            raise VectorIndexError("the index has no collection after setup")
        return name

    def _settle_sync(self, hot: str, archived: list[Fact], current: list[Fact]) -> TierMoves:
        cold = self.cold_collection
        client = self._link.client()
        moves = TierMoves()
        if archived:
            if not client.has_collection(cold):
                create_collection(
                    client,
                    cold,
                    model=self._embedder.model_name,
                    dimension=self._embedder.dimension,
                    timeout_s=self._timeout_s,
                )
            written, embedded = self._ensure(cold, hot, archived, only_if_elsewhere=False)
            moves += TierMoves(to_cold=written, embedded=embedded)
        if current and client.has_collection(cold):
            written, embedded = self._ensure(hot, cold, current, only_if_elsewhere=True)
            moves += TierMoves(to_hot=written, embedded=embedded)
        self._maybe_flush(client, (hot, cold))
        return moves

    def _ensure(
        self, target: str, source: str, facts: list[Fact], *, only_if_elsewhere: bool
    ) -> tuple[int, int]:
        """Each fact's row in ``target`` with the fact's text, and none left in ``source``."""
        ids = [f.fact_id for f in facts]
        elsewhere = self._get_sync(source, ids, [*FIELDS, "vector"])
        if only_if_elsewhere:
            facts = [f for f in facts if f.fact_id in elsewhere]
            if not facts:
                return 0, 0
        there = self._get_sync(target, [f.fact_id for f in facts], ["fact_id", "text"])
        rows: list[dict[str, Any]] = []
        stale: list[Fact] = []
        for fact in facts:
            text = fit_text(fact.text)
            if fact.fact_id in there and there[fact.fact_id]["text"] == text:
                continue
            row = elsewhere.get(fact.fact_id)
            if row is not None and row["text"] == text:
                rows.append(dict(row))
            else:
                stale.append(fact)
        if stale:
            vectors = self._embedder.embed([f.text for f in stale])
            rows += [
                _row(f, self._embedder.model_name, v) for f, v in zip(stale, vectors, strict=True)
            ]
        client = self._link.client()
        for first in range(0, len(rows), _CHUNK):
            write_rows(client, target, rows[first : first + _CHUNK], timeout_s=self._timeout_s)
        doomed = [f.fact_id for f in facts if f.fact_id in elsewhere]
        if doomed:
            client.delete(source, ids=doomed, timeout=self._timeout_s)
        self._unflushed[target] = self._unflushed.get(target, 0) + len(rows)
        self._unflushed[source] = self._unflushed.get(source, 0) + len(doomed)
        return len(rows), len(stale)

    def _maybe_flush(self, client: MilvusClient, names: Iterable[str]) -> None:
        now = self._monotonic()
        if now - self._flushed_at < self._min_flush_interval_s:
            return
        due = [n for n in names if self._unflushed.get(n, 0) >= self._flush_every]
        for name in due:
            client.flush(name, timeout=self._timeout_s)
            self._unflushed[name] = 0
        if due:
            self._flushed_at = now

    def _get_sync(
        self, collection: str, ids: list[str], fields: list[str]
    ) -> dict[str, dict[str, Any]]:
        client = self._link.client()
        if not ids or not client.has_collection(collection):
            return {}
        found: dict[str, dict[str, Any]] = {}
        for first in range(0, len(ids), _CHUNK):
            rows = self._link.get(collection, ids[first : first + _CHUNK], fields)
            found.update({str(r["fact_id"]): dict(r) for r in rows})
        return found

    def _texts_sync(self, collection: str, subject_id: str) -> dict[str, str]:
        client = self._link.client()
        if not client.has_collection(collection):
            return {}
        pages = self._link.pages(
            collection, where=of_subject(subject_id), output_fields=["fact_id", "text"]
        )
        return {str(r["fact_id"]): str(r["text"]) for page in pages for r in page}

    def _count_sync(self, collection: str) -> int:
        client = self._link.client()
        if not client.has_collection(collection):
            return 0
        return self._link.count(collection)


def _row(fact: Fact, model: str, vector: Sequence[float]) -> dict[str, Any]:
    return {
        "fact_id": fact.fact_id,
        "subject_id": fact.subject_id,
        "embedding_model": model,
        "category": fact.category,
        "text": fit_text(fact.text),
        "vector": list(vector),
    }


def archived_subject(client: MilvusClient, prefix: str, fact_id: str) -> str | None:
    """The subject of an archived fact, from its row in any cold collection of ``prefix``
    (every embedding model's); None if no cold tier holds it."""
    for name in client.list_collections():
        if not name.startswith(f"{prefix}_cold_"):
            continue
        rows = loaded(client, name, lambda c, n=name: _subject_row(c, n, fact_id))  # type: ignore[misc]
        if rows:
            return str(rows[0]["subject_id"])
    return None


def _subject_row(client: MilvusClient, name: str, fact_id: str) -> list[dict[str, Any]]:
    rows = client.get(
        name, ids=[fact_id], output_fields=["subject_id"], consistency_level=READ_CONSISTENCY
    )
    return list(rows)
