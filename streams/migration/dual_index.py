"""The Milvus work of a dual-index migration: backfill batches, shadow queries, counts.

``backfill_batch`` re-embeds one page of the old collection's rows with the new
model and upserts them by fact id into the new collection, then reads those
fact ids in the old collection again: a row deleted there meanwhile (erasure,
archive) is deleted from the new one, and a row whose text changed (a worker's
dual write raced the page) is embedded again from its current text. Dual
writes go to the old collection first, so after that check the new collection
holds, for every fact id of the page, what the old one holds — whichever of
the backfill and the worker wrote last. It never touches facts (Redis), only
vectors.

``shadow_queries`` searches both collections for sampled stored facts, each
with its own model's vector of the fact's text and within the fact's subject
(as the write path searches), and scores the new collection's top-10 against
the old one's (Recall@10, NDCG@10), the fact itself left out of both.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from pymilvus import MilvusClient

from slotwise.processors.drift_adapter import ndcg_at, recall_at
from slotwise.processors.ports import Embedder
from slotwise.sinks.milvus.collections import READ_CONSISTENCY, among, beyond, of_subject
from slotwise.sinks.milvus.engine import write_rows
from slotwise.streams.migration.adapter_fit import sample_pairs

__all__ = ["ShadowReport", "backfill_batch", "count", "old_pages", "shadow_queries"]

_ROW_FIELDS = ["fact_id", "subject_id", "category", "text"]
_K = 10


def count(client: MilvusClient, name: str) -> int:
    client.load_collection(name)
    rows = client.query(
        name, filter="", output_fields=["count(*)"], consistency_level=READ_CONSISTENCY
    )
    return int(rows[0]["count(*)"]) if rows else 0


def old_pages(
    client: MilvusClient, name: str, after: str, size: int
) -> Iterator[list[dict[str, Any]]]:
    """Pages of ``name``'s rows in fact-id order, from the first fact id above ``after``."""
    client.load_collection(name)
    rows = client.query_iterator(
        name,
        batch_size=size,
        filter=beyond(after) if after else "",
        output_fields=_ROW_FIELDS,
        consistency_level=READ_CONSISTENCY,
    )
    try:
        while page := rows.next():
            yield [dict(r) for r in page]
    finally:
        rows.close()


def _upsert(
    client: MilvusClient, name: str, rows: list[dict[str, Any]], embedder: Embedder
) -> None:
    vectors = embedder.embed([str(r["text"]) for r in rows])
    write_rows(
        client,
        name,
        [
            {
                "fact_id": r["fact_id"],
                "subject_id": r["subject_id"],
                "embedding_model": embedder.model_name,
                "category": r.get("category"),
                "text": r["text"],  # read from a collection of the same schema: it fits
                "vector": v,
            }
            for r, v in zip(rows, vectors, strict=True)
        ],
        timeout_s=None,
    )


def backfill_batch(
    client: MilvusClient, old: str, new: str, page: list[dict[str, Any]], embedder: Embedder
) -> int:
    """Copy one page of ``old`` into ``new``, re-embedded, until both agree; rows written."""
    written = {str(r["fact_id"]): str(r["text"]) for r in page}
    rows = page
    while rows:
        _upsert(client, new, rows, embedder)
        written.update((str(r["fact_id"]), str(r["text"])) for r in rows)
        ids = [str(r["fact_id"]) for r in rows]
        now = {
            str(r["fact_id"]): r
            for r in client.query(
                old,
                filter=among(ids),
                output_fields=_ROW_FIELDS,
                consistency_level=READ_CONSISTENCY,
            )
        }
        gone = [i for i in ids if i not in now]
        if gone:
            client.delete(new, filter=among(gone))
        # Rewritten in the old collection while this page was embedded: again, from there.
        rows = [r for i, r in now.items() if str(r["text"]) != written[i]]
    return len(page)


@dataclass(frozen=True)
class ShadowReport:
    queries: int
    recall_at_10: float
    ndcg_at_10: float

    def as_dict(self) -> dict[str, object]:
        return {
            "queries": self.queries,
            "recall_at_10": self.recall_at_10,
            "ndcg_at_10": self.ndcg_at_10,
        }


def _top(
    client: MilvusClient, name: str, vector: list[float], subject: str, fact_id: str
) -> list[str]:
    hits = client.search(
        name,
        data=[vector],
        limit=_K + 1,
        filter=of_subject(subject),
        output_fields=["fact_id"],
        search_params={"metric_type": "COSINE"},
        consistency_level=READ_CONSISTENCY,
    )[0]
    return [str(h["fact_id"]) for h in hits if str(h["fact_id"]) != fact_id][:_K]


def shadow_queries(
    client: MilvusClient,
    old: str,
    old_model: str,
    new: str,
    embedder: Embedder,
    *,
    sample: int,
    seed: int,
) -> ShadowReport:
    """The new collection's top-10 scored against the old one's, for sampled stored facts."""
    pairs = sample_pairs(client, old, old_model, sample, seed=seed)
    subjects = (
        {
            str(r["fact_id"]): str(r["subject_id"])
            for r in client.query(
                old,
                filter=among(pairs.fact_ids),
                output_fields=["subject_id"],
                consistency_level=READ_CONSISTENCY,
            )
        }
        if pairs.fact_ids
        else {}
    )
    client.load_collection(new)
    new_vectors = embedder.embed(pairs.texts) if pairs.texts else []
    recalls, ndcgs = [], []
    for fact_id, old_vector, new_vector in zip(pairs.fact_ids, pairs.old, new_vectors, strict=True):
        subject = subjects.get(fact_id)
        if subject is None:
            continue
        relevant = set(_top(client, old, old_vector.tolist(), subject, fact_id))
        if not relevant:
            continue  # the subject's only fact: nothing to find
        ranked = _top(client, new, new_vector, subject, fact_id)
        recalls.append(recall_at(ranked, relevant, _K))
        ndcgs.append(ndcg_at(ranked, relevant, _K))
    return ShadowReport(
        len(recalls),
        float(np.mean(recalls)) if recalls else 0.0,
        float(np.mean(ndcgs)) if ndcgs else 0.0,
    )
