"""The drift benchmark's corpus, relevance and table, on a small LoCoMo-shaped file.

The real models run only in the benchmark; here the "models" are a random
rotation of one set of vectors, so every figure has a known direction.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from rich.progress import Progress

from slotwise.loadtest.drift import cached_embeddings, load_corpus, measure_direction
from slotwise.processors.drift_adapter import unit_rows

SAMPLE = {
    "sample_id": "conv-1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a dog."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "I work at Figma."},
        ],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
    },
    "observation": {
        "session_1_observation": {
            "Ana": [["Ana adopted a dog.", "D1:1"]],
            "Ben": [["Ben works at Figma.", "D1:2"]],
        }
    },
    "qa": [
        {"question": "What pet does Ana have?", "evidence": ["D1:1"]},
        {"question": "Unanswerable?", "evidence": ["D9:9"]},
    ],
}


def test_the_corpus_links_questions_to_their_turns_and_observations(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    second = {**SAMPLE, "sample_id": "conv-2"}
    path.write_text(json.dumps([SAMPLE, second]))
    corpus = load_corpus(path)
    assert corpus.doc_texts[:2] == ["Ana: I adopted a dog.", "Ben: I work at Figma."]
    assert len(corpus.doc_ids) == 8 and list(corpus.doc_groups) == [0] * 4 + [1] * 4
    # A question whose evidence is nowhere is left out; each is tied to its conversation.
    assert corpus.query_texts == ["What pet does Ana have?"] * 2
    assert corpus.relevant[0] == {"0:D1:1", "0:session_1_observation:0:D1:1"}
    assert list(corpus.query_groups) == [0, 1]
    assert len(load_corpus(path, conversations=1).doc_ids) == 4
    assert corpus.sampled(1).query_texts == ["What pet does Ana have?"]


def test_embeddings_are_cached_by_model_and_chunk(tmp_path: Path) -> None:
    class Counting:
        model_name = "counting"
        dimension = 2
        calls = 0

        def embed(self, texts: list[str]) -> list[list[float]]:
            Counting.calls += len(texts)
            return [[float(len(t)), 1.0] for t in texts]

    with Progress(disable=True) as progress:
        first = cached_embeddings(Counting(), ["a", "bb"], tmp_path, progress)
        again = cached_embeddings(Counting(), ["a", "bb"], tmp_path, progress)
    assert Counting.calls == 2
    assert np.array_equal(first, again)


def test_an_adapter_recovers_what_full_re_embedding_finds(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    groups = 4
    path = tmp_path / "locomo.json"
    samples = []
    for g in range(groups):
        turns = [
            {"speaker": "Ana", "dia_id": f"D1:{i}", "text": f"turn {g}-{i}"} for i in range(60)
        ]
        questions = [{"question": f"q {g}-{i}", "evidence": [f"D1:{i}"]} for i in range(60)]
        samples.append(
            {
                "sample_id": f"c{g}",
                "conversation": {"session_1": turns},
                "observation": {},
                "qa": questions,
            }
        )
    path.write_text(json.dumps(samples))
    corpus = load_corpus(path)
    # Each question lies next to its own turn; the new model is a rotation into 48-d.
    docs = unit_rows(rng.normal(size=(len(corpus.doc_ids), 32)))
    queries = unit_rows(docs + 0.1 * rng.normal(size=docs.shape))
    basis, _ = np.linalg.qr(rng.normal(size=(48, 48)))
    new_docs, new_queries = docs @ basis[:32], queries @ basis[:32]
    figures = {
        f.name.split(": ", 1)[1]: f.value
        for f in measure_direction(
            corpus, ("old", docs, queries), ("new", new_docs, new_queries), fit_pairs=200, rank=None
        )
    }
    assert figures["(d) full re-embedding"] == figures["old model, old index (before)"]
    assert isinstance(figures["(a) no adapter (forced)"], float)
    assert figures["(a) no adapter (forced)"] < 0.5
    assert figures["(b)/(d)"] > 0.95 and figures["(c)/(d)"] > 0.95
