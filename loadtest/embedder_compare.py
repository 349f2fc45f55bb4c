"""The ONNX int8 MiniLM against candle's fp32 one: CPU per text, and whether neighbours agree.

    python -m slotwise.loadtest.embedder_compare [--texts 256] [--store 2000]

* CPU per text, one text a call and in batches of 32, on one thread each (the
  process CPU of embedding LoCoMo-length and fact-length texts, best of three);
* agreement: cosine of the two vectors of one text, and Recall@10 — for each
  query, the share of fp32's ten nearest neighbours that int8 also ranks in its
  ten — over two stores: the evaluation set's texts (labelled turns, slot-pair
  incumbents and turns) and a soak-like store of generated fact texts.
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.loadtest.results import Figure, print_summary, write_result
from slotwise.models.embedders import MiniLMEmbedder, OnnxMiniLMEmbedder
from slotwise.processors.ports import Embedder
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.evaluation.data import read_pairs, read_turns

__all__ = ["eval_texts", "main", "recall_at", "store_texts"]

DATASETS = Path(__file__).resolve().parents[1] / "datasets"


def eval_texts() -> list[str]:
    texts: list[str] = []
    for split in ("dev", "test"):
        texts += [t.text for t in read_turns(DATASETS / f"turns.{split}.jsonl")]
        for pair in read_pairs(DATASETS / f"slot_pairs.{split}.jsonl"):
            texts += [pair.incumbent.text, pair.turn.text]
    return list(dict.fromkeys(texts))


def store_texts(count: int) -> list[str]:
    config = WorkloadConfig(subjects=200, count=count, subject_prefix=uuid.uuid4().hex)
    return list(dict.fromkeys(w.fact_text for w in generate(config, AttributeSchema.load())))


def recall_at(
    reference: npt.NDArray[np.float32], candidate: npt.NDArray[np.float32], k: int = 10
) -> float:
    """Mean share of each row's ``k`` nearest other rows under ``reference`` that
    ``candidate`` also puts in its ``k`` nearest."""

    def nearest(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
        scores = rows @ rows.T
        np.fill_diagonal(scores, -np.inf)
        return np.argsort(-scores, axis=1)[:, :k]

    want, got = nearest(reference), nearest(candidate)
    return float(np.mean([len(set(w) & set(g)) / k for w, g in zip(want, got, strict=True)]))


def cpu_per_text_us(embedder: Embedder, texts: Sequence[str], batch: int) -> float:
    """Process CPU per text, best of three passes (no cache in front)."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for start in range(0, len(texts), batch):
            embedder.embed(list(texts[start : start + batch]))
        best = min(best, time.process_time() - started)
    return best / len(texts) * 1e6


def figures(texts: int, store: int) -> list[Figure]:
    fp32, int8 = MiniLMEmbedder(), OnnxMiniLMEmbedder()
    evaluation = eval_texts()
    sample = evaluation[:texts]
    rows: list[Figure] = []
    for name, embedder in (("candle fp32", fp32), ("onnx int8", int8)):
        embedder.embed(sample[:8])  # warm up
        rows += [
            Figure(f"CPU per text, one a call: {name}", cpu_per_text_us(embedder, sample, 1), "us"),
            Figure(
                f"CPU per text, batches of 32: {name}", cpu_per_text_us(embedder, sample, 32), "us"
            ),
        ]
    for label, corpus in (("eval set", evaluation), ("soak-like store", store_texts(store))):
        a = np.asarray(fp32.embed(corpus), dtype=np.float32)
        b = np.asarray(int8.embed(corpus), dtype=np.float32)
        cosines = (a * b).sum(axis=1)
        rows += [
            Figure(f"texts: {label}", len(corpus), "texts"),
            Figure(f"cosine fp32 vs int8, min: {label}", float(cosines.min()), ""),
            Figure(f"cosine fp32 vs int8, median: {label}", float(np.median(cosines)), ""),
            Figure(f"Recall@10 vs fp32 neighbours: {label}", recall_at(a, b), "ratio"),
        ]
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m slotwise.loadtest.embedder_compare", description=__doc__
    )
    parser.add_argument("--texts", type=int, default=256, help="texts timed per embedder")
    parser.add_argument("--store", type=int, default=2_000, help="generated facts in the store")
    parser.add_argument("--json-dir", type=Path, help="also write <json-dir>/embedders.json")
    args = parser.parse_args(argv)
    rows = figures(args.texts, args.store)
    print_summary("embedders: ONNX int8 against candle fp32", rows)
    if args.json_dir is not None:
        write_result(args.json_dir / "embedders.json", "embedders", rows)


if __name__ == "__main__":
    main()
