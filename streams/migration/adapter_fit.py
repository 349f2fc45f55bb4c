"""Fitting and judging a drift adapter on the deployment's own stored facts.

``census`` reads the ``embedding_model`` stamp of every row of the collection
behind the alias — the check that catches the store re-embedded once without
its stamps updated, or a backfill that never finished
(“Memory Conflict, Forgetting, and Embedding Drift”): an adapter
fitted as if the store were all one model projects queries into a space a
share of its rows is not in, and recall drops silently below what validation
promised. Fitting and enabling refuse a collection whose rows are not all the
collection's model (or written through an adapter into its space).

``sample_pairs`` draws stored facts uniformly (reservoir sampling over one
pass of the collection): the old vector is the one Milvus holds, the new one
is embedded now — the old model is not needed at all. ``judge`` scores an
adapter on pairs held out of its fit: for each held-out fact the old model's
own top-10 neighbours among the held-out facts are the relevant set, and the
mapped new-model query must find them (Recall@10, NDCG@10), beside the mean
cosine between mapped and stored vectors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pymilvus import MilvusClient

from slotwise.processors.drift_adapter import DriftAdapter, ndcg_at, recall_at, unit_rows
from slotwise.processors.ports import Embedder
from slotwise.sinks.milvus.collections import READ_CONSISTENCY, among, collection_model
from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "Census",
    "MigrationError",
    "Pairs",
    "alias_collection",
    "census",
    "embed_all",
    "judge",
    "sample_pairs",
    "stored_pairs",
]

Matrix = npt.NDArray[np.float32]
Tick = Callable[[int], None]
_PAGE = 1000
_K = 10


class MigrationError(SlotwiseError, RuntimeError):
    """An embedding migration step cannot go ahead; the message says why."""


@dataclass(frozen=True)
class Census:
    """Rows of one collection by the ``embedding_model`` they carry."""

    collection: str
    model: str
    stamps: dict[str, int]

    @property
    def rows(self) -> int:
        return sum(self.stamps.values())

    def foreign(self) -> dict[str, int]:
        """Stamps that are neither the collection's model nor an adapter into its space."""
        into = f">{self.model}:"
        return {s: n for s, n in self.stamps.items() if s != self.model and into not in s}

    def require_uniform(self) -> None:
        strays = self.foreign()
        if strays:
            shown = ", ".join(f"{n} rows of {s}" for s, n in sorted(strays.items()))
            raise MigrationError(
                f"{self.collection} is stamped {self.model}, but holds {shown} of "
                f"{self.rows}: re-embed them (or finish that backfill) before fitting an adapter"
            )


def alias_collection(client: MilvusClient, alias: str) -> tuple[str, str]:
    """The collection behind ``alias`` and the model it is stamped with."""
    name = str(client.describe_alias(alias)["collection_name"])
    model = collection_model(client, name)
    if model is None:
        raise MigrationError(f"{name} carries no embedding-model stamp")
    return name, model


def census(client: MilvusClient, alias: str, tick: Tick | None = None) -> Census:
    name, model = alias_collection(client, alias)
    client.load_collection(name)
    stamps: Counter[str] = Counter()
    rows = client.query_iterator(
        name,
        batch_size=_PAGE,
        output_fields=["embedding_model"],
        consistency_level=READ_CONSISTENCY,
    )
    try:
        while page := rows.next():
            stamps.update(str(r["embedding_model"]) for r in page)
            if tick:
                tick(len(page))
    finally:
        rows.close()
    return Census(name, model, dict(stamps))


@dataclass(frozen=True)
class Pairs:
    """Stored facts sampled for a fit: ids, texts, the stored (old) vectors."""

    fact_ids: list[str]
    texts: list[str]
    old: Matrix

    def split(self, held_out: float, seed: int) -> tuple[Pairs, Pairs]:
        order = np.random.default_rng(seed).permutation(len(self.fact_ids))
        cut = len(order) - max(_K + 1, int(len(order) * held_out))
        if cut < 2:
            raise MigrationError(f"{len(order)} stored facts are too few to fit and hold out")
        return self._take(order[:cut]), self._take(order[cut:])

    def _take(self, rows: npt.NDArray[np.int64]) -> Pairs:
        return Pairs(
            [self.fact_ids[i] for i in rows], [self.texts[i] for i in rows], self.old[rows]
        )


def sample_pairs(
    client: MilvusClient,
    name: str,
    model: str,
    size: int,
    *,
    seed: int,
    tick: Tick | None = None,
) -> Pairs:
    """Up to ``size`` rows of ``model``'s own vectors, uniformly (reservoir sampling)."""
    rng = np.random.default_rng(seed)
    kept: list[dict[str, object]] = []
    seen = 0
    rows = client.query_iterator(
        name,
        batch_size=_PAGE,
        output_fields=["fact_id", "text", "vector", "embedding_model"],
        consistency_level=READ_CONSISTENCY,
    )
    try:
        while page := rows.next():
            for row in page:
                if row["embedding_model"] != model:
                    continue
                seen += 1
                if len(kept) < size:
                    kept.append(row)
                elif (slot := int(rng.integers(seen))) < size:
                    kept[slot] = row
            if tick:
                tick(len(page))
    finally:
        rows.close()
    return Pairs(
        [str(r["fact_id"]) for r in kept],
        [str(r["text"]) for r in kept],
        np.asarray([r["vector"] for r in kept], dtype=np.float32).reshape(len(kept), -1),
    )


def stored_pairs(client: MilvusClient, name: str, model: str, fact_ids: list[str]) -> Pairs:
    """The rows of ``fact_ids`` still stored with ``model``'s own vectors (erased ones are gone)."""
    rows: list[dict[str, object]] = []
    for first in range(0, len(fact_ids), _PAGE):
        rows += client.query(
            name,
            filter=among(fact_ids[first : first + _PAGE]),
            output_fields=["fact_id", "text", "vector", "embedding_model"],
            consistency_level=READ_CONSISTENCY,
        )
    kept = [r for r in rows if r["embedding_model"] == model]
    return Pairs(
        [str(r["fact_id"]) for r in kept],
        [str(r["text"]) for r in kept],
        np.asarray([r["vector"] for r in kept], dtype=np.float32).reshape(len(kept), -1),
    )


def embed_all(embedder: Embedder, texts: list[str], tick: Tick | None = None) -> Matrix:
    vectors = []
    for first in range(0, len(texts), 64):
        batch = texts[first : first + 64]
        vectors.append(np.asarray(embedder.embed(batch), dtype=np.float32))
        if tick:
            tick(len(batch))
    return np.concatenate(vectors) if vectors else np.zeros((0, embedder.dimension), np.float32)


def judge(adapter: DriftAdapter, new: Matrix, old: Matrix) -> dict[str, float]:
    """Recall@10 and NDCG@10 of mapped queries against the old model's own neighbours."""
    if len(old) <= _K:
        raise MigrationError(f"{len(old)} held-out facts are too few to judge Recall@{_K}")
    mapped = adapter.map(new)
    stored = unit_rows(old)
    truth = stored @ stored.T
    got = mapped @ stored.T
    np.fill_diagonal(truth, -np.inf)  # a fact is not its own neighbour
    np.fill_diagonal(got, -np.inf)
    recalls, ndcgs = [], []
    for row in range(len(old)):
        relevant = {str(i) for i in np.argsort(-truth[row])[:_K]}
        ranked = [str(i) for i in np.argsort(-got[row])[:_K]]
        recalls.append(recall_at(ranked, relevant, _K))
        ndcgs.append(ndcg_at(ranked, relevant, _K))
    return {
        "recall_at_10": float(np.mean(recalls)),
        "ndcg_at_10": float(np.mean(ndcgs)),
        "mean_cosine": float(np.mean(np.sum(mapped * stored, axis=1))),
        "held_out": len(old),
    }
