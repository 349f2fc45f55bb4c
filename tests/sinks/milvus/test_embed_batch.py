"""EmbeddingBatch: the texts of concurrent searches embedded in one call, each caller
getting exactly its own vectors."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from slotwise.sinks.milvus.embed_batch import EmbeddingBatch


class RecordingEmbedder:
    """A vector that names its text, and a record of every call."""

    model_name = "recording"
    dimension = 2

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self._fail_on = fail_on

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        if self._fail_on in texts:
            raise RuntimeError(f"cannot embed {self._fail_on!r}")
        return [[float(len(t)), float(sum(map(ord, t)))] for t in texts]


def vector(text: str) -> list[float]:
    return [float(len(text)), float(sum(map(ord, text)))]


def test_one_turns_callers_share_one_call_and_each_gets_its_own_vectors() -> None:
    embedder = RecordingEmbedder()

    async def main() -> list[list[list[float]]]:
        with ThreadPoolExecutor(2) as pool:
            batch = EmbeddingBatch(embedder, pool)
            asks = [["a query", "row one"], ["another"], ["a query"], []]
            return await asyncio.gather(*(batch.embed(texts) for texts in asks))

    first, second, third, empty = asyncio.run(main())
    assert first == [vector("a query"), vector("row one")]
    assert second == [vector("another")] and third == [vector("a query")] and empty == []
    assert embedder.calls == [["a query", "row one", "another"]]  # a repeat embedded once


def test_a_turn_past_the_size_is_embedded_in_several_calls() -> None:
    embedder = RecordingEmbedder()

    async def main() -> list[list[list[float]]]:
        with ThreadPoolExecutor(2) as pool:
            batch = EmbeddingBatch(embedder, pool, max_texts=4)
            return await asyncio.gather(*(batch.embed([f"t{i}", f"u{i}"]) for i in range(5)))

    replies = asyncio.run(main())
    assert replies == [[vector(f"t{i}"), vector(f"u{i}")] for i in range(5)]
    assert sorted(len(call) for call in embedder.calls) == [2, 4, 4]


def test_a_failed_call_fails_its_own_callers_only() -> None:
    embedder = RecordingEmbedder(fail_on="poison")

    async def main() -> tuple[list[object], list[list[float]]]:
        with ThreadPoolExecutor(2) as pool:
            batch = EmbeddingBatch(embedder, pool, max_texts=2)
            failed = await asyncio.gather(
                batch.embed(["fine"]), batch.embed(["poison"]), return_exceptions=True
            )
            later = await batch.embed(["fine"])
            return failed, later

    failed, later = asyncio.run(main())
    assert all(isinstance(f, RuntimeError) for f in failed)
    assert later == [vector("fine")]


def test_a_caller_cancelled_before_the_call_leaves_is_not_embedded() -> None:
    embedder = RecordingEmbedder()

    async def main() -> list[list[float]]:
        with ThreadPoolExecutor(2) as pool:
            batch = EmbeddingBatch(embedder, pool)
            doomed = asyncio.ensure_future(batch.embed(["never"]))
            await asyncio.sleep(0)
            doomed.cancel()
            return await batch.embed(["kept"])

    assert asyncio.run(main()) == [vector("kept")]
    assert embedder.calls == [["kept"]]


def test_the_size_must_be_positive() -> None:
    with ThreadPoolExecutor(1) as pool, pytest.raises(ValueError):
        EmbeddingBatch(RecordingEmbedder(), pool, max_texts=0)


def test_calls_a_closed_loop_never_sent_do_not_hold_up_the_next_loop() -> None:
    embedder = RecordingEmbedder()
    with ThreadPoolExecutor(2) as pool:
        batch = EmbeddingBatch(embedder, pool)
        first = asyncio.new_event_loop()
        orphan = first.create_task(batch.embed(["orphan"]))
        first.call_soon(first.stop)  # stops before the scheduled send runs
        first.run_forever()
        orphan.cancel()
        first.close()

        async def later() -> list[list[float]]:
            return await asyncio.wait_for(batch.embed(["later"]), timeout=5)

        assert asyncio.run(later()) == [vector("later")]
    assert embedder.calls == [["later"]]
