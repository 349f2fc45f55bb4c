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
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from slotwise.processors.ports import Embedder

__all__ = ["EmbeddingBatch"]


@dataclass(frozen=True, slots=True)
class _Ask:
    texts: Sequence[str]
    vectors: asyncio.Future[list[list[float]]]


class EmbeddingBatch:
    """Embeds the texts of one event-loop turn's calls in calls of about ``max_texts``."""

    def __init__(self, embedder: Embedder, executor: Executor, *, max_texts: int = 128) -> None:
        if max_texts < 1:
            raise ValueError("max_texts must be at least 1")
        self._embedder = embedder
        self._executor = executor
        self._max_texts = max_texts
        # The loop a send is scheduled on, until it runs.
        self._sending_on: asyncio.AbstractEventLoop | None = None
        self._waiting: list[_Ask] = []
        # Strong references: the loop keeps only weak ones to running tasks.
        self._embedding: set[asyncio.Task[None]] = set()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, as ``embedder.embed(texts)`` returns them."""
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        if self._sending_on is not loop:
            # After every task this turn woke has run up to its own call. (Calls left
            # by a loop that closed before sending them belong to no running caller.)
            self._waiting = []
            self._sending_on = loop
            loop.call_soon(self._send)
        vectors: asyncio.Future[list[list[float]]] = loop.create_future()
        self._waiting.append(_Ask(texts, vectors))
        return await vectors

    def _send(self) -> None:
        waiting = [a for a in self._waiting if not a.vectors.done()]
        self._waiting = []
        self._sending_on = None
        batch: list[_Ask] = []
        size = 0
        for ask in waiting:
            if batch and size + len(ask.texts) > self._max_texts:
                self._start(batch)
                batch, size = [], 0
            batch.append(ask)
            size += len(ask.texts)
        if batch:
            self._start(batch)

    def _start(self, asks: list[_Ask]) -> None:
        task = asyncio.get_running_loop().create_task(self._embed(asks), name="slotwise-embed")
        self._embedding.add(task)
        task.add_done_callback(self._embedding.discard)

    async def _embed(self, asks: list[_Ask]) -> None:
        # A text asked for twice in a batch is embedded once.
        unique = list(dict.fromkeys(t for ask in asks for t in ask.texts))
        loop = asyncio.get_running_loop()
        try:
            vectors = await loop.run_in_executor(self._executor, self._embedder.embed, unique)
        except BaseException as exc:
            for ask in asks:
                if not ask.vectors.done():
                    ask.vectors.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        by_text = dict(zip(unique, vectors, strict=True))
        for ask in asks:
            if not ask.vectors.done():
                ask.vectors.set_result([by_text[t] for t in ask.texts])
