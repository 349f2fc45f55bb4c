"""Texts that concurrent searches embed, embedded together in one call.

A vector search embeds its query (and the subject's buffered rows) before
Milvus can look. MiniLM through candle costs ~23 ms of CPU for one text alone
and ~9 ms a text in a batch of 32 (measured on this machine,
docs/performance.md). With hundreds of records in flight the cascade's searches
come many to an event-loop turn, so an :class:`EmbeddingBatch` collects the
texts asked for in one turn and embeds them in one call on the given executor.
A text's vector does not depend on the batch it was embedded in
(``models/embedders.py``): batching changes what it costs, not what it
returns. A failed embedding fails every caller of its batch, as it would have
failed each of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from slotwise.processors.ports import Embedder
from slotwise.sinks.turn_batch import TurnBatch, settle

__all__ = ["EmbeddingBatch"]


@dataclass(frozen=True, slots=True)
class _Ask:
    texts: Sequence[str]
    reply: asyncio.Future[list[list[float]]]


class EmbeddingBatch:
    """Embeds the texts of one event-loop turn's calls in calls of about ``max_texts``."""

    def __init__(self, embedder: Embedder, executor: Executor, *, max_texts: int = 128) -> None:
        if max_texts < 1:
            raise ValueError("max_texts must be at least 1")
        self._embedder = embedder
        self._executor = executor
        self._max_texts = max_texts
        self._turn = TurnBatch(self._chunks, self._embed, name="slotwise-embed")

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, as ``embedder.embed(texts)`` returns them."""
        if not texts:
            return []
        reply: asyncio.Future[list[list[float]]] = asyncio.get_running_loop().create_future()
        self._turn.put(_Ask(texts, reply))
        return await reply

    def _chunks(self, asks: list[_Ask]) -> Iterator[list[_Ask]]:
        """Whole calls, about ``max_texts`` texts a chunk (a larger call is a chunk alone)."""
        chunk: list[_Ask] = []
        size = 0
        for ask in asks:
            if chunk and size + len(ask.texts) > self._max_texts:
                yield chunk
                chunk, size = [], 0
            chunk.append(ask)
            size += len(ask.texts)
        if chunk:
            yield chunk

    async def _embed(self, asks: list[_Ask]) -> None:
        # A text asked for twice in a batch is embedded once.
        unique = list(dict.fromkeys(t for ask in asks for t in ask.texts))
        loop = asyncio.get_running_loop()
        try:
            vectors = await loop.run_in_executor(self._executor, self._embedder.embed, unique)
        except BaseException as exc:
            for ask in asks:
                settle(ask.reply, exc)
            if not isinstance(exc, Exception):
                raise
            return
        by_text = dict(zip(unique, vectors, strict=True))
        for ask in asks:
            if not ask.reply.done():
                ask.reply.set_result([by_text[t] for t in ask.texts])
