"""The int8 ONNX MiniLM: the same model as candle's fp32 one, within a hair, and a version apart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from slotwise.loadtest.embedder_compare import recall_at
from slotwise.models.embedders import (
    DEFAULT_EMBEDDER,
    DEFAULT_MODEL,
    MINILM_MODELS,
    CachedEmbedder,
    MiniLMEmbedder,
    OnnxMiniLMEmbedder,
    embedder_named,
)
from slotwise.models.exceptions import EmbedderUnavailable

TEXTS = [
    "User works at Stripe.",
    "User is a backend engineer at Datadog.",
    "User lives in Lisbon.",
    "User visited Lisbon in March.",
    "User is allergic to peanuts.",
    "hi",
    "We moved to Porto last month, my wife and I, and the kids love the new school so far.",
    "User has two cats named Mango and Kiwi.",
]


@pytest.fixture(scope="module")
def onnx() -> Iterator[OnnxMiniLMEmbedder]:
    yield OnnxMiniLMEmbedder()


def test_vectors_are_384_d_unit_and_close_to_fp32(onnx: OnnxMiniLMEmbedder) -> None:
    int8 = np.asarray(onnx.embed(TEXTS))
    fp32 = np.asarray(MiniLMEmbedder().embed(TEXTS))

    assert int8.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    assert (int8 * fp32).sum(axis=1).min() >= 0.995


def test_a_text_embeds_the_same_alone_or_in_a_padded_batch(onnx: OnnxMiniLMEmbedder) -> None:
    batch = np.asarray(onnx.embed(TEXTS))
    alone = np.asarray([onnx.embed([t])[0] for t in TEXTS])

    assert np.allclose(batch, alone, atol=1e-4)


def test_it_is_a_model_version_of_its_own_and_a_new_stores_default() -> None:
    # Its vectors are not candle's: a candle store moves to it by migration, never silently.
    chosen = embedder_named(DEFAULT_EMBEDDER)
    assert isinstance(chosen, CachedEmbedder)
    assert chosen.model_name == DEFAULT_MODEL == "all-MiniLM-L6-v2-onnx-int8"
    assert DEFAULT_MODEL != MiniLMEmbedder.model_name
    assert embedder_named("minilm").model_name == MiniLMEmbedder.model_name
    # Both precisions are the model the attribute classifier was calibrated on.
    assert {DEFAULT_MODEL, MiniLMEmbedder.model_name} == MINILM_MODELS


def test_a_model_file_that_will_not_load_is_unavailable(tmp_path: Path) -> None:
    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"not an onnx file")
    with pytest.raises(EmbedderUnavailable, match="cannot load"):
        OnnxMiniLMEmbedder(model_path=broken)


def test_recall_at_k_counts_shared_neighbours() -> None:
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(40, 8)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)

    assert recall_at(rows, rows, k=5) == 1.0
    shuffled = rng.normal(size=(40, 8)).astype(np.float32)
    assert recall_at(rows, shuffled, k=5) < 0.5
