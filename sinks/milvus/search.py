"""Searching one subject's fact vectors: ``VectorSearch.nearest``.

Every search filters on ``subject_id`` (the partition key) and then drops any
hit of another subject anyway, counting it: a subject must never see another
subject's facts. Milvus finds the rows; their cosines are computed here, from
the vectors Milvus returns and those of the subject's buffered rows alike, so
a ranking never depends on whether a row was written yet (a crash and a replay
write at other moments) and a search writes nothing: single-row upserts ahead
of every search held the write lock and cost Milvus Lite ~5 ms of CPU each,
which put seconds of queueing on the vector stage under load.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
from prometheus_client import Counter

from slotwise.processors.model import Tier
from slotwise.sinks.milvus.client import MilvusLink
from slotwise.sinks.milvus.collections import among, of_subject
from slotwise.sinks.milvus.embed_batch import EmbeddingBatch
from slotwise.sinks.milvus.engine import hit_fact_id
from slotwise.sinks.milvus.space import IndexSpace
from slotwise.sinks.milvus.writes import RowBuffer

__all__ = ["FOREIGN_RESULTS", "SubjectSearch"]

FOREIGN_RESULTS = Counter(
    "slotwise_vector_foreign_results_total",
    "Vector hits of another subject dropped after a subject-filtered search",
)
# Scores this close are one tie: equal texts embed to equal vectors.
_TIE = 1e-6


def _cosine(query: np.ndarray, vector: Sequence[float]) -> float:
    row = np.asarray(vector, dtype=np.float32)
    norms = float(np.linalg.norm(query)) * float(np.linalg.norm(row))
    return float(np.dot(query, row)) / norms if norms else -math.inf


class SubjectSearch:
    """Nearest facts of one subject, in the hot tier (buffered rows included) or the cold."""

    def __init__(
        self, link: MilvusLink, space: IndexSpace, buffer: RowBuffer, queries: EmbeddingBatch
    ) -> None:
        self._link = link
        self._space = space
        self._buffer = buffer
        # Concurrent searches embed their texts in one call (embed_batch.py).
        self._queries = queries

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
        """Up to ``k`` ``(fact_id, cosine)`` of this subject only, best first, cosine ≥ floor,
        none of ``exclude``.

        The subject's buffered rows take part, so a search sees the subject's
        own earlier writes. ``tier`` names the tier searched. ``exclude`` is
        applied by Milvus, so the excluded rows take no place among the ``k``.
        """
        skip = set(exclude)
        buffered = (
            []
            if tier == "cold"
            else [r for r in self._buffer.of_subject(subject_id) if r.fact_id not in skip]
        )
        if tier == "cold":
            client = await self._link.connect()
            cold = self._space.cold_collection
            if not await self._link.call(client.has_collection, cold):
                return []
            collection = cold
        else:
            collection = await self._space.current()
        vectors = await self._queries.embed([text, *(r.text for r in buffered)])
        hits = await self._through_ties(collection, subject_id, vectors[0], k + len(buffered), skip)
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

    async def _through_ties(
        self,
        collection: str,
        subject_id: str,
        query: list[float],
        limit: int,
        exclude: Collection[str],
    ) -> list[dict[str, Any]]:
        """The subject's ``limit`` best hits, and every hit tied with the last of them.

        Milvus cuts a tie at the limit by where the rows lie in its segments, and a
        row written again with the same vector (an index heal rewrites rows,
        ``streams/runtime/index_heal.py``) moves: cut through a tie, the same search
        would return other rows after a heal than an uninterrupted run did. With the
        whole tie fetched, the caller's ranking by score then fact id decides.
        """
        asked = limit + 1
        while True:
            hits: list[dict[str, Any]] = await self._link.call(
                self._search_sync, collection, subject_id, query, asked, exclude
            )
            if len(hits) < asked or hits[-1]["distance"] < hits[limit - 1]["distance"] - _TIE:
                return hits
            asked *= 2

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
        found = self._link.search(
            collection, [query], limit=limit, where=where, output_fields=["subject_id", "vector"]
        )
        return found[0]
