"""Embedding drift on two real models: what an upgrade costs, and what an adapter recovers.

    python -m slotwise.loadtest.drift [--fit-pairs 3000] [--out docs/results/drift.json]

The stored facts are the turns and observations of LoCoMo's first seven
conversations (``--conversations``; 5,879 texts, each conversation a subject);
the held-out queries are 400 of their 1,344 questions (``--queries``; never
used in a fit), and a
query's relevant items are the turns its ``evidence`` names and the
observations citing those turns. Every search is
exact cosine within the question's own conversation, as a subject-filtered
FLAT search in Milvus is. For each direction of the upgrade (MiniLM → mpnet,
384 → 768, and back) it reports Recall@10 and NDCG@10 of:

(a) new-model queries against the old index, no adapter — slotwise refuses
    this search; forced, the query is cut or zero-padded to the old dimension;
(b) the same through a Procrustes adapter, (c) through a ridge affine one
    (full rank, ``--rank``, and at rank 128), all fitted on ``--fit-pairs``
    stored facts (old vector, new vector);
(d) full re-embedding: new-model queries against a new-model index;

the recovery ratios (b)/(d) and (c)/(d), and the time an adapter adds to a
query. Embeddings are cached by model and text list under the model cache
(``SLOTWISE_MODEL_CACHE``), chunk by chunk, so an interrupted run resumes;
mpnet embeds 5-40 texts a second on this machine, as loaded as it is.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.progress import Progress

from slotwise.loadtest.locomo import default_path
from slotwise.loadtest.mpnet import default_cache, mpnet_dir
from slotwise.loadtest.results import Figure, print_summary, write_result
from slotwise.models.embedders import FolderEmbedder, MiniLMEmbedder
from slotwise.processors.drift_adapter import (
    DriftAdapter,
    fit_low_rank_affine,
    fit_procrustes,
    ndcg_at,
    recall_at,
    unit_rows,
)
from slotwise.processors.ports import Embedder
from slotwise.topics.codec import loads

__all__ = ["Corpus", "load_corpus", "main", "measure_direction"]

Matrix = npt.NDArray[np.float32]
_CHUNK = 256
_K = 10


@dataclass(frozen=True)
class Corpus:
    """Documents (stored facts) and held-out queries, each tagged with its conversation."""

    doc_ids: list[str]
    doc_texts: list[str]
    doc_groups: npt.NDArray[np.int32]
    query_texts: list[str]
    query_groups: npt.NDArray[np.int32]
    relevant: list[set[str]]

    def sampled(self, queries: int, seed: int = 14) -> Corpus:
        """The same stored texts with ``queries`` of the questions, drawn at random."""
        if queries >= len(self.query_texts):
            return self
        keep = np.sort(np.random.default_rng(seed).choice(len(self.query_texts), queries, False))
        return Corpus(
            self.doc_ids,
            self.doc_texts,
            self.doc_groups,
            [self.query_texts[i] for i in keep],
            self.query_groups[keep],
            [self.relevant[i] for i in keep],
        )


def load_corpus(path: Path, conversations: int | None = None) -> Corpus:
    """The first ``conversations`` samples (all by default) as stored texts and queries."""
    samples = loads(path.read_bytes())[:conversations]
    doc_ids: list[str] = []
    doc_texts: list[str] = []
    doc_groups: list[int] = []
    query_texts: list[str] = []
    query_groups: list[int] = []
    relevant: list[set[str]] = []
    for group, sample in enumerate(samples):
        cites: dict[str, set[str]] = {}
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    doc = f"{group}:{turn['dia_id']}"
                    doc_ids.append(doc)
                    doc_texts.append(f"{turn['speaker']}: {turn['text']}")
                    doc_groups.append(group)
                    cites.setdefault(turn["dia_id"], set()).add(doc)
        for session, by_speaker in sample["observation"].items():
            for speaker_items in by_speaker.values():
                for n, (text, dia_id) in enumerate(speaker_items):
                    doc = f"{group}:{session}:{n}:{dia_id}"
                    doc_ids.append(doc)
                    doc_texts.append(text)
                    doc_groups.append(group)
                    for cited in [dia_id] if isinstance(dia_id, str) else dia_id:
                        cites.setdefault(cited, set()).add(doc)
        for qa in sample["qa"]:
            wanted = set().union(*(cites.get(e, set()) for e in qa.get("evidence", [])))
            if wanted:
                query_texts.append(qa["question"])
                query_groups.append(group)
                relevant.append(wanted)
    return Corpus(
        doc_ids,
        doc_texts,
        np.asarray(doc_groups, dtype=np.int32),
        query_texts,
        np.asarray(query_groups, dtype=np.int32),
        relevant,
    )


def cached_embeddings(
    embedder: Embedder, texts: Sequence[str], cache: Path, progress: Progress
) -> Matrix:
    """``texts`` embedded by ``embedder``, from (and into) the cache, chunk by chunk.

    A chunk is keyed by the model and a hash of its texts, so an interrupted run
    resumes and a corpus of fewer conversations reuses the chunks it shares.
    """
    folder = cache / "embeddings" / embedder.model_name
    folder.mkdir(parents=True, exist_ok=True)
    chunks = []
    task = progress.add_task(f"{embedder.model_name}: {len(texts)} texts", total=len(texts))
    for first in range(0, len(texts), _CHUNK):
        batch = list(texts[first : first + _CHUNK])
        path = folder / f"{hashlib.sha256(chr(0).join(batch).encode()).hexdigest()[:20]}.npy"
        if not path.exists():
            staged = path.with_suffix(".tmp.npy")
            np.save(staged, np.asarray(embedder.embed(batch), np.float32))
            staged.rename(path)
        chunks.append(np.load(path))
        progress.advance(task, len(batch))
    return np.concatenate(chunks)


def _scores(corpus: Corpus, queries: Matrix, docs: Matrix) -> tuple[float, float]:
    """Mean Recall@10 and NDCG@10 of ``queries`` against ``docs``, within each conversation."""
    recalls, ndcgs = [], []
    for group in np.unique(corpus.query_groups):
        in_group = np.flatnonzero(corpus.doc_groups == group)
        asked = np.flatnonzero(corpus.query_groups == group)
        sims = queries[asked] @ docs[in_group].T
        top = np.argsort(-sims, axis=1)[:, :_K]
        for row, q in enumerate(asked):
            ranked = [corpus.doc_ids[in_group[i]] for i in top[row]]
            recalls.append(recall_at(ranked, corpus.relevant[q], _K))
            ndcgs.append(ndcg_at(ranked, corpus.relevant[q], _K))
    return float(np.mean(recalls)), float(np.mean(ndcgs))


def _forced(queries: Matrix, dimension: int) -> Matrix:
    """What searching the old index with a new-model query amounts to: cut or zero-pad."""
    if queries.shape[1] >= dimension:
        return unit_rows(queries[:, :dimension])
    return unit_rows(np.pad(queries, ((0, 0), (0, dimension - queries.shape[1]))))


def _map_latency_us(adapter: DriftAdapter, query: Matrix, repeats: int = 2000) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        adapter.map(query)
    return (time.perf_counter() - start) / repeats * 1e6


def measure_direction(
    corpus: Corpus,
    old: tuple[str, Matrix, Matrix],
    new: tuple[str, Matrix, Matrix],
    *,
    fit_pairs: int,
    rank: int | None,
    seed: int = 14,
) -> list[Figure]:
    """Figures (a)-(d) for an upgrade from ``old`` to ``new``: (name, docs, queries) each."""
    old_name, old_docs, old_queries = old
    new_name, new_docs, new_queries = new
    label = f"{old_name} → {new_name}"
    sample = np.random.default_rng(seed).choice(len(old_docs), fit_pairs, replace=False)
    procrustes = fit_procrustes(
        new_docs[sample], old_docs[sample], source_model=new_name, target_model=old_name
    )
    affine = fit_low_rank_affine(
        new_docs[sample], old_docs[sample], source_model=new_name, target_model=old_name, rank=rank
    )
    low = min(128, old_docs.shape[1], new_docs.shape[1])
    narrow = fit_low_rank_affine(
        new_docs[sample], old_docs[sample], source_model=new_name, target_model=old_name, rank=low
    )
    before = _scores(corpus, old_queries, old_docs)
    forced = _scores(corpus, _forced(new_queries, old_docs.shape[1]), old_docs)
    rotated = _scores(corpus, procrustes.map(new_queries), old_docs)
    mapped = _scores(corpus, affine.map(new_queries), old_docs)
    full = _scores(corpus, new_queries, new_docs)
    one = new_queries[:1]
    return [
        Figure(f"{label}: old model, old index (before)", before[0], "Recall@10"),
        Figure(f"{label}: (a) no adapter (forced)", forced[0], "Recall@10"),
        Figure(f"{label}: (b) Procrustes", rotated[0], "Recall@10"),
        Figure(f"{label}: (c) low-rank affine", mapped[0], "Recall@10"),
        Figure(
            f"{label}: (c) at rank {low}",
            _scores(corpus, narrow.map(new_queries), old_docs)[0],
            "Recall@10",
        ),
        Figure(f"{label}: (d) full re-embedding", full[0], "Recall@10"),
        Figure(f"{label}: (b)/(d)", rotated[0] / full[0], "ratio"),
        Figure(f"{label}: (c)/(d)", mapped[0] / full[0], "ratio"),
        Figure(
            f"{label}: NDCG@10 a/b/c/d",
            f"{forced[1]:.3f}/{rotated[1]:.3f}/{mapped[1]:.3f}/{full[1]:.3f}",
            "NDCG@10",
        ),
        Figure(f"{label}: Procrustes map per query", _map_latency_us(procrustes, one), "µs"),
        Figure(f"{label}: affine map per query", _map_latency_us(affine, one), "µs"),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m slotwise.loadtest.drift")
    parser.add_argument("--corpus", type=Path, default=default_path())
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--conversations", type=int, default=7, help="of LoCoMo's 10")
    parser.add_argument("--queries", type=int, default=400, help="held-out questions sampled")
    parser.add_argument("--fit-pairs", type=int, default=3000)
    parser.add_argument("--rank", type=int, default=None, help="affine rank (default: full)")
    parser.add_argument("--out", type=Path, default=Path("docs/results/drift.json"))
    args = parser.parse_args(argv)
    console = Console()
    corpus = load_corpus(args.corpus, args.conversations).sampled(args.queries)
    console.log(f"{len(corpus.doc_texts)} stored texts, {len(corpus.query_texts)} queries")
    minilm = MiniLMEmbedder()
    mpnet = FolderEmbedder(mpnet_dir(args.cache))
    vectors: dict[str, tuple[str, Matrix, Matrix]] = {}
    with Progress(console=console) as progress:
        for embedder in (minilm, mpnet):
            docs = cached_embeddings(embedder, corpus.doc_texts, args.cache, progress)
            queries = cached_embeddings(embedder, corpus.query_texts, args.cache, progress)
            vectors[embedder.model_name] = (embedder.model_name, docs, queries)
    a, b = vectors[minilm.model_name], vectors[mpnet.model_name]
    figures = [
        *measure_direction(corpus, a, b, fit_pairs=args.fit_pairs, rank=args.rank),
        *measure_direction(corpus, b, a, fit_pairs=args.fit_pairs, rank=args.rank),
    ]
    print_summary("embedding drift: MiniLM ⇄ mpnet on LoCoMo", figures, console)
    write_result(
        args.out,
        "drift",
        figures,
        config={
            "stored_texts": len(corpus.doc_texts),
            "queries": len(corpus.query_texts),
            "conversations": args.conversations,
            "fit_pairs": args.fit_pairs,
            "rank": args.rank,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
