"""The blocking client: the calls of :class:`~slotwise.client.aio.AsyncClient`, without ``await``.

It runs an :class:`AsyncClient` on an event loop of its own, in a background
thread, so it works the same from a script, a thread pool or a notebook whose
own loop is already running; subscriptions are plain blocking iterators.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from datetime import datetime
from types import TracebackType
from typing import Any, Self, TypeVar

from slotwise.client.aio import AsyncClient
from slotwise.client.publishing import Published, Writable
from slotwise.client.subscription import Subscription
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import SearchHit
from slotwise.topics.records import Command, ErasureAttestation, Fact
from slotwise.topics.tracing import outgoing

__all__ = ["Client"]

T = TypeVar("T")


class Client:
    """One deployment's memory, blocking. Close it (``with``) to release its connections."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="slotwise-client", daemon=True
        )
        self._thread.start()
        self._async = AsyncClient(settings)
        self.settings = self._async.settings

    def publish(
        self, record: Writable, *, traceparent: str | None = None, timeout: float = 30.0
    ) -> Published:
        """Publish an observation, a candidate or a command; returns once the broker has it."""
        if traceparent is None:
            # Read here, on the caller's thread: the trace to carry is the caller's.
            traceparent = dict(outgoing()).get("traceparent", b"").decode() or None
        return self._run(self._async.publish(record, traceparent=traceparent, timeout=timeout))

    def wait(self, subject_id: str, observation_id: str, *, timeout: float = 30.0) -> None:
        """Return once the observation is applied; ``WaitTimeout`` if not within ``timeout``."""
        self._run(self._async.wait(subject_id, observation_id, timeout=timeout))

    def facts(
        self,
        subject_id: str,
        *,
        as_of: datetime | None = None,
        believed_at: datetime | None = None,
        history: bool = False,
        include_archived: bool = False,
    ) -> list[Fact]:
        """The subject's facts (see :meth:`AsyncClient.facts`)."""
        return self._run(
            self._async.facts(
                subject_id,
                as_of=as_of,
                believed_at=believed_at,
                history=history,
                include_archived=include_archived,
            )
        )

    def search(
        self, subject_id: str, text: str, *, k: int = 5, include_archived: bool = False
    ) -> list[SearchHit]:
        """The subject's current facts nearest ``text`` in meaning."""
        return self._run(
            self._async.search(subject_id, text, k=k, include_archived=include_archived)
        )

    def erase(
        self,
        subject_id: str,
        *,
        fact_id: str | None = None,
        attribute: str | None = None,
        reason: str | None = None,
        timeout: float | None = None,
    ) -> Command | ErasureAttestation:
        """Erase a fact, an attribute or the subject (see :meth:`AsyncClient.erase`)."""
        return self._run(
            self._async.erase(
                subject_id, fact_id=fact_id, attribute=attribute, reason=reason, timeout=timeout
            )
        )

    def forget(self, subject_id: str, *, as_of: datetime | None = None) -> Command:
        """Run the forgetting pass over the subject now (see :meth:`AsyncClient.forget`)."""
        return self._run(self._async.forget(subject_id, as_of=as_of))

    def restore(self, subject_id: str, fact_id: str) -> Command:
        """Bring an archived fact back to the hot tier."""
        return self._run(self._async.restore(subject_id, fact_id))

    def subscribe(self, topic: str, group: str, *, from_beginning: bool = False) -> Subscription:
        """``for record in client.subscribe("supersessions", group="my-agent")``."""
        return Subscription(self.settings, topic, group, from_beginning=from_beginning)

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._run(self._async.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(call, self._loop).result()
