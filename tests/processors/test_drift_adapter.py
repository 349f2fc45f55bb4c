"""Drift adapters on a synthetic drift with a known answer: a random rotation plus noise.

The "old model" embeds clustered latent points; the "new model" embeds the same
points through a random rotation (and, across dimensions, an isometric
embedding into a larger space or out of one), plus noise. Searching old
vectors with new vectors directly finds near-random neighbours; the fitted
adapters must find nearly what the old model's own queries find.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from slotwise.processors.drift_adapter import (
    AdapterError,
    DriftAdapter,
    fit_adapter,
    fit_low_rank_affine,
    fit_procrustes,
    ndcg_at,
    recall_at,
    unit_rows,
)

Matrix = npt.NDArray[np.float32]
K = 10


def _rotation(dim: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """A random orthogonal matrix (QR of a Gaussian, signs fixed: Haar-distributed)."""
    q, r = np.linalg.qr(rng.normal(size=(dim, dim)))
    rotation: npt.NDArray[np.float64] = q * np.sign(np.diag(r))
    return rotation


def _drift(
    old_dim: int, new_dim: int, *, n: int = 1200, noise: float = 0.02, seed: int = 7
) -> tuple[Matrix, Matrix]:
    """Paired (old, new) unit vectors of the same ``n`` points: rotation + noise."""
    rng = np.random.default_rng(seed)
    latent_dim = min(old_dim, new_dim)
    centres = rng.normal(size=(60, latent_dim))
    latent = centres[rng.integers(60, size=n)] + 0.35 * rng.normal(size=(n, latent_dim))
    old_basis = _rotation(old_dim, rng)[:latent_dim]
    new_basis = _rotation(new_dim, rng)[:latent_dim]
    old = unit_rows(latent @ old_basis + noise * rng.normal(size=(n, old_dim)))
    new = unit_rows(latent @ new_basis + noise * rng.normal(size=(n, new_dim)))
    return old, new


def _recall(queries: Matrix, truth_queries: Matrix, docs: Matrix) -> float:
    """Recall@10 of ``queries`` against the neighbours ``truth_queries`` find (not itself)."""
    truth = truth_queries @ docs.T
    got = queries @ docs.T
    np.fill_diagonal(truth, -np.inf)
    np.fill_diagonal(got, -np.inf)
    return float(
        np.mean(
            [
                recall_at(
                    [str(i) for i in np.argsort(-got[r])[:K]],
                    {str(i) for i in np.argsort(-truth[r])[:K]},
                    K,
                )
                for r in range(len(docs))
            ]
        )
    )


@pytest.mark.parametrize(("old_dim", "new_dim"), [(384, 384), (384, 768), (768, 384)])
@pytest.mark.parametrize("kind", ["procrustes", "affine"])
def test_an_adapter_recovers_nearly_all_recall_of_a_known_drift(
    old_dim: int, new_dim: int, kind: str
) -> None:
    old, new = _drift(old_dim, new_dim)
    fit, held = slice(0, 900), slice(900, None)
    adapter = fit_adapter(
        "procrustes" if kind == "procrustes" else "affine",
        new[fit],
        old[fit],
        source_model="new-model",
        target_model="old-model",
    )
    docs = old[held]
    forced = (
        new[held][:, :old_dim]
        if new_dim >= old_dim
        else np.pad(new[held], ((0, 0), (0, old_dim - new_dim)))
    )
    without = _recall(unit_rows(forced), docs, docs)
    bridged = _recall(adapter.map(new[held]), docs, docs)
    assert without < 0.2, f"the drift is not a drift: unadapted recall {without:.3f}"
    assert bridged > 0.9, f"{kind} {new_dim}->{old_dim} recovered only {bridged:.3f}"
    assert adapter.map(new[:3]).shape == (3, old_dim)


def test_procrustes_is_exact_on_a_noiseless_rotation() -> None:
    old, new = _drift(64, 64, n=400, noise=0.0)
    adapter = fit_procrustes(new, old, source_model="b", target_model="a")
    assert np.allclose(adapter.map(new), old, atol=1e-4)
    w = adapter.weights
    assert np.allclose(w @ w.T, np.eye(64), atol=1e-4)


def test_a_low_rank_map_has_the_rank_asked_for() -> None:
    old, new = _drift(64, 96, n=500)
    adapter = fit_low_rank_affine(new, old, source_model="b", target_model="a", rank=16)
    assert np.linalg.matrix_rank(adapter.weights, tol=1e-4) == 16
    with pytest.raises(AdapterError, match="rank"):
        fit_low_rank_affine(new, old, source_model="b", target_model="a", rank=65)


def test_an_adapter_round_trips_and_its_version_is_its_content() -> None:
    old, new = _drift(32, 48, n=200)
    adapter = fit_procrustes(new, old, source_model="mpnet", target_model="minilm")
    again = DriftAdapter.from_bytes(adapter.to_bytes())
    assert again.version == adapter.version
    assert again.stamp == f"mpnet>minilm:procrustes:{adapter.version}"
    assert np.array_equal(again.weights, adapter.weights)
    other = fit_procrustes(new[:150], old[:150], source_model="mpnet", target_model="minilm")
    assert other.version != adapter.version
    assert again.joins("mpnet", "minilm") and not again.joins("minilm", "mpnet")


def test_an_adapter_refuses_vectors_of_another_dimension_and_bad_bytes() -> None:
    old, new = _drift(32, 48, n=200)
    adapter = fit_procrustes(new, old, source_model="b", target_model="a")
    with pytest.raises(AdapterError, match="48-d"):
        adapter.map(old)
    with pytest.raises(AdapterError, match="not a stored adapter"):
        DriftAdapter.from_bytes(b"nonsense")
    with pytest.raises(AdapterError, match="equal rows"):
        fit_procrustes(new[:10], old[:11], source_model="b", target_model="a")


def test_recall_and_ndcg() -> None:
    assert recall_at(["a", "x", "b"], {"a", "b"}, 10) == 1.0
    assert recall_at(["x", "a"], {"a", "b"}, 1) == 0.0
    assert ndcg_at(["a", "b", "x"], {"a", "b"}) == pytest.approx(1.0)
    assert ndcg_at(["x", "a"], {"a"}) == pytest.approx(1 / np.log2(3))
    with pytest.raises(AdapterError):
        recall_at(["a"], set())
