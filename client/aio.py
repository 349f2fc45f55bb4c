"""The asyncio client: what an agent does with its memory, in its own process.

    async with AsyncClient() as memory:
        await memory.publish(observation)
        await memory.wait(subject, observation.observation_id, timeout=10)
        facts = await memory.facts(subject)

It reads exactly as ``slotwise facts`` and the HTTP API do
(:class:`slotwise.streams.read.reads.Reads`), from the deployment its
:class:`~slotwise.streams.config.Settings` name (``SLOTWISE_*`` variables
by default). Importing it loads no model and no Milvus client: those come
with the first :meth:`AsyncClient.search`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import datetime
from types import TracebackType
from typing import Self, TypeVar

from slotwise.client.exceptions import InvalidRequest, Unavailable, WaitTimeout
from slotwise.client.publishing import Published, Publisher, Writable
from slotwise.client.subscription import AsyncSubscription, Subscription
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import FactQuery, InvalidQuery, Reads, ReadUnavailable, SearchHit
from slotwise.topics.records import Fact

__all__ = ["AsyncClient"]

T = TypeVar("T")


async def _translated(call: Callable[[], Awaitable[T]]) -> T:
    try:
        return await call()
    except InvalidQuery as exc:
        raise InvalidRequest(str(exc), field=exc.field) from exc
    except ReadUnavailable as exc:
        raise Unavailable(str(exc), service=exc.service) from exc


class AsyncClient:
    """One deployment's memory. Close it (``async with``) to release its connections."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._publisher = Publisher(self.settings)
        self._stack = AsyncExitStack()
        self._reads: Reads | None = None

    async def publish(
        self, record: Writable, *, traceparent: str | None = None, timeout: float = 30.0
    ) -> Published:
        """Publish an observation, a candidate or a command; returns once the broker has it.

        ``traceparent`` defaults to the caller's current OpenTelemetry context.
        """
        return await asyncio.to_thread(
            self._publisher.publish, record, traceparent=traceparent, timeout_s=timeout
        )

    async def wait(self, subject_id: str, observation_id: str, *, timeout: float = 30.0) -> None:
        """Return once the observation is applied (read-your-writes); else :class:`WaitTimeout`."""
        reads = self._open()
        applied = await _translated(lambda: reads.wait(subject_id, observation_id, timeout))
        if not applied:
            raise WaitTimeout(
                f"observation {observation_id} of {subject_id} not applied within {timeout:g}s"
            )

    async def facts(
        self,
        subject_id: str,
        *,
        as_of: datetime | None = None,
        believed_at: datetime | None = None,
        history: bool = False,
        include_archived: bool = False,
    ) -> list[Fact]:
        """The subject's facts: current ones by default.

        ``as_of``: the facts true at that instant (valid time); ``believed_at``: what
        slotwise believed at that instant (transaction time, from ``recorded_at``);
        ``history``: superseded and historical facts too. Semantics:
        :mod:`slotwise.streams.read.temporal`.
        """
        query = FactQuery(as_of, believed_at, history, include_archived)
        reads = self._open()
        return await _translated(lambda: reads.facts(subject_id, query, via="client"))

    async def search(
        self, subject_id: str, text: str, *, k: int = 5, include_archived: bool = False
    ) -> list[SearchHit]:
        """The subject's current facts nearest ``text`` in meaning (``.fact``, ``.score``).

        A new fact is searchable once the worker's commit has flushed its vector, a
        little after :meth:`wait` returns (that sees the Redis state): within the
        commit interval and one Milvus upsert, typically under a second.
        """
        query = FactQuery(include_archived=include_archived)
        reads = self._open()
        return await _translated(
            lambda: reads.search(subject_id, text, k=k, query=query, via="client")
        )

    def subscribe(
        self, topic: str, group: str, *, from_beginning: bool = False
    ) -> AsyncSubscription:
        """``async for record in client.subscribe("supersessions", group="my-agent")``."""
        return AsyncSubscription(
            Subscription(self.settings, topic, group, from_beginning=from_beginning)
        )

    async def close(self) -> None:
        await asyncio.to_thread(self._publisher.close)
        await self._stack.aclose()
        self._reads = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _open(self) -> Reads:
        if self._reads is None:
            self._reads = Reads.open(self.settings, self._stack)
        return self._reads
