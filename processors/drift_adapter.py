"""Query-time bridges between two embedding models (Drift-Adapter, Vejendla, EMNLP 2025).

After an embedding-model upgrade the stored vectors live in the old model's
space; a query embedded by the new model does not reach them. An adapter is a
map ``new space → old space`` fitted on paired embeddings of a sample of stored
facts (the old vector Milvus already holds, the new one embedded now), so a
deployment can switch its embedder on day one and re-embed the store later.

Two parameterisations, both closed-form:

* **Procrustes** — ``y ≈ (x - μx) W + μy`` with ``W`` (semi-)orthogonal: the
  SVD solution of ``min ‖Xc W - Yc‖``. With different dimensions ``W`` has
  orthonormal rows (``d_new > d_old``: a projection) or columns (an embedding
  into the larger space). A rotation cannot over-fit, so it is the safe first
  choice on a small sample.
* **Low-rank affine** — ``y ≈ x A + b``, ``A`` the ridge least-squares solution
  truncated to rank ``r`` (reduced-rank regression: the fitted values projected
  on their top ``r`` right singular vectors). It can correct what a rotation
  cannot (scales, shears), at the price of needing more pairs.

Mapped vectors are scaled to unit length: the index ranks by cosine.

An adapter carries the models it joins and a content hash, its ``version``;
``stamp`` (``source>target:kind:version``) is what rows written through it
carry as ``embedding_model``, so a later migration can tell them apart from
rows embedded by the target model itself.

The retrieval metrics used to judge an adapter (and a migration) are here too:
Recall@k and NDCG@k of a ranking against a set of relevant ids.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from slotwise.processors.ports import Embedder
from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "AdaptedEmbedder",
    "AdapterError",
    "AdapterKind",
    "DriftAdapter",
    "fit_adapter",
    "fit_low_rank_affine",
    "fit_procrustes",
    "ndcg_at",
    "recall_at",
    "unit_rows",
]

Matrix = npt.NDArray[np.float32]
AdapterKind = Literal["procrustes", "affine"]
KINDS: tuple[AdapterKind, ...] = ("procrustes", "affine")


class AdapterError(SlotwiseError, ValueError):
    """An adapter cannot be fitted, decoded or applied as asked."""


def unit_rows(matrix: npt.ArrayLike) -> Matrix:
    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: Matrix = (rows / np.where(norms == 0, 1.0, norms)).astype(np.float32)
    return unit


@dataclass(frozen=True, eq=False)
class DriftAdapter:
    """``map(new-model vectors) → old-model space``: ``x W + b``, then unit length."""

    kind: AdapterKind
    source_model: str
    target_model: str
    weights: Matrix
    bias: Matrix
    pairs: int

    def __post_init__(self) -> None:
        if self.weights.ndim != 2 or self.bias.shape != (self.weights.shape[1],):
            raise AdapterError(
                f"weights {self.weights.shape} and bias {self.bias.shape} do not fit together"
            )

    @property
    def source_dimension(self) -> int:
        return int(self.weights.shape[0])

    @property
    def target_dimension(self) -> int:
        return int(self.weights.shape[1])

    @property
    def version(self) -> str:
        """A hash of everything that decides the map: the same fit, the same version."""
        digest = hashlib.sha256()
        for part in (self.kind, self.source_model, self.target_model):
            digest.update(part.encode() + b"\0")
        digest.update(np.ascontiguousarray(self.weights, dtype=np.float32).tobytes())
        digest.update(np.ascontiguousarray(self.bias, dtype=np.float32).tobytes())
        return digest.hexdigest()[:12]

    @property
    def stamp(self) -> str:
        """What rows written through this adapter carry as ``embedding_model``."""
        return f"{self.source_model}>{self.target_model}:{self.kind}:{self.version}"

    def joins(self, source_model: str, target_model: str) -> bool:
        return (self.source_model, self.target_model) == (source_model, target_model)

    def map(self, vectors: npt.ArrayLike) -> Matrix:
        rows = np.asarray(vectors, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[1] != self.source_dimension:
            raise AdapterError(
                f"adapter {self.stamp} maps {self.source_dimension}-d vectors, got {rows.shape}"
            )
        return unit_rows(rows @ self.weights + self.bias)

    def to_bytes(self) -> bytes:
        meta = {
            "kind": self.kind,
            "source_model": self.source_model,
            "target_model": self.target_model,
            "pairs": self.pairs,
        }
        buffer = io.BytesIO()
        np.savez(buffer, weights=self.weights, bias=self.bias, meta=np.array(json.dumps(meta)))
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, raw: bytes) -> DriftAdapter:
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as arrays:
                meta = json.loads(str(arrays["meta"]))
                weights = np.asarray(arrays["weights"], dtype=np.float32)
                bias = np.asarray(arrays["bias"], dtype=np.float32)
        except (OSError, ValueError, KeyError) as exc:
            raise AdapterError(f"not a stored adapter: {exc}") from exc
        if meta.get("kind") not in KINDS:
            raise AdapterError(f"unknown adapter kind {meta.get('kind')!r}")
        return cls(
            kind=meta["kind"],
            source_model=str(meta["source_model"]),
            target_model=str(meta["target_model"]),
            weights=weights,
            bias=bias,
            pairs=int(meta["pairs"]),
        )


class AdaptedEmbedder:
    """An embedder whose vectors an adapter maps: an embedder *of the adapter's target space*.

    Whatever searches or compares vectors of the old collection (the index, the
    erasure's checks) takes this in place of the new model's embedder.
    """

    def __init__(self, inner: Embedder, adapter: DriftAdapter) -> None:
        if (inner.model_name, inner.dimension) != (adapter.source_model, adapter.source_dimension):
            raise AdapterError(
                f"adapter {adapter.stamp} maps {adapter.source_model} "
                f"({adapter.source_dimension}-d) queries, but the embedder is "
                f"{inner.model_name} ({inner.dimension}-d)"
            )
        self.inner = inner
        self.adapter = adapter

    @property
    def model_name(self) -> str:
        return self.adapter.target_model

    @property
    def dimension(self) -> int:
        return self.adapter.target_dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        mapped: list[list[float]] = self.adapter.map(self.inner.embed(texts)).tolist()
        return mapped


def _paired(new: npt.ArrayLike, old: npt.ArrayLike) -> tuple[Matrix, Matrix]:
    x, y = np.asarray(new, dtype=np.float64), np.asarray(old, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 2 or len(x) != len(y):
        raise AdapterError(
            f"paired embeddings must be two matrices of equal rows: {x.shape}, {y.shape}"
        )
    if len(x) < 2:
        raise AdapterError("an adapter needs at least two pairs")
    return x, y  # type: ignore[return-value]


def fit_procrustes(
    new: npt.ArrayLike, old: npt.ArrayLike, *, source_model: str, target_model: str
) -> DriftAdapter:
    """Centred orthogonal Procrustes from the new model's space to the old one's."""
    x, y = _paired(new, old)
    mx, my = x.mean(axis=0), y.mean(axis=0)
    u, _, vt = np.linalg.svd((x - mx).T @ (y - my), full_matrices=False)
    w = u @ vt  # (d_new, d_old), orthonormal rows or columns
    return DriftAdapter(
        kind="procrustes",
        source_model=source_model,
        target_model=target_model,
        weights=w.astype(np.float32),
        bias=(my - mx @ w).astype(np.float32),
        pairs=len(x),
    )


def fit_low_rank_affine(
    new: npt.ArrayLike,
    old: npt.ArrayLike,
    *,
    source_model: str,
    target_model: str,
    rank: int | None = None,
    ridge: float = 0.01,
) -> DriftAdapter:
    """Ridge least squares ``y ≈ x A + b`` with ``A`` of rank at most ``rank``.

    ``ridge`` is relative to the mean eigenvalue of the centred Gram matrix, so
    one value suits vectors of any dimension and scale.
    """
    x, y = _paired(new, old)
    mx, my = x.mean(axis=0), y.mean(axis=0)
    xc, yc = x - mx, y - my
    gram = xc.T @ xc
    penalty = ridge * float(np.trace(gram)) / gram.shape[0]
    a = np.linalg.solve(gram + penalty * np.eye(gram.shape[0]), xc.T @ yc)
    full = min(a.shape)
    r = full if rank is None else rank
    if not 1 <= r <= full:
        raise AdapterError(f"rank must be between 1 and {full}, got {r}")
    if r < full:
        # Reduced-rank regression: keep the directions of the old space the fit explains most.
        _, _, vt = np.linalg.svd(xc @ a, full_matrices=False)
        a = a @ vt[:r].T @ vt[:r]
    return DriftAdapter(
        kind="affine",
        source_model=source_model,
        target_model=target_model,
        weights=a.astype(np.float32),
        bias=(my - mx @ a).astype(np.float32),
        pairs=len(x),
    )


def fit_adapter(
    kind: AdapterKind,
    new: npt.ArrayLike,
    old: npt.ArrayLike,
    *,
    source_model: str,
    target_model: str,
    rank: int | None = None,
) -> DriftAdapter:
    if kind == "procrustes":
        return fit_procrustes(new, old, source_model=source_model, target_model=target_model)
    if kind == "affine":
        return fit_low_rank_affine(
            new, old, source_model=source_model, target_model=target_model, rank=rank
        )
    raise AdapterError(f"unknown adapter kind {kind!r}; one of {', '.join(KINDS)}")


def recall_at(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    """The share of ``relevant`` among the first ``k`` of ``ranked``."""
    if not relevant:
        raise AdapterError("recall of a query with no relevant item is undefined")
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    """Binary-relevance NDCG@k: 1 when every relevant item leads the ranking."""
    if not relevant:
        raise AdapterError("NDCG of a query with no relevant item is undefined")
    gain = sum(1.0 / np.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in relevant)
    ideal = sum(1.0 / np.log2(i + 2) for i in range(min(k, len(relevant))))
    return float(gain / ideal)
