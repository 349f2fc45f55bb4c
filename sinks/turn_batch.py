"""Requests made during one turn of the event loop, sent together when it ends.

The worker runs records of many subjects as concurrent tasks; a reply that
wakes hundreds of them lets each run up to its next request in the same turn.
A :class:`TurnBatch` queues those requests and, once the turn is over, hands
them to ``send`` in chunks, each chunk on a task of its own: the Redis script
pipeline (``redis_batch.py``) and the query embeddings (``embed_batch.py``) are
built on it. A request whose caller was cancelled before the turn ended is not
sent, as a call never made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["Request", "TurnBatch", "settle"]


class Request(Protocol):
    @property
    def reply(self) -> asyncio.Future[Any]: ...


R = TypeVar("R", bound=Request)


class TurnBatch(Generic[R]):
    def __init__(
        self,
        chunks: Callable[[list[R]], Iterable[list[R]]],
        send: Callable[[list[R]], Coroutine[Any, Any, None]],
        *,
        name: str,
    ) -> None:
        self._chunks = chunks
        self._send = send
        self._name = name
        # The loop a send is scheduled on, until it runs.
        self._sending_on: asyncio.AbstractEventLoop | None = None
        self._waiting: list[R] = []
        # Strong references: the loop keeps only weak ones to running tasks.
        self._sending: set[asyncio.Task[None]] = set()

    def put(self, request: R) -> None:
        loop = asyncio.get_running_loop()
        if self._sending_on is not loop:
            # Requests left by a loop that closed before sending them belong to no
            # running caller.
            self._waiting = []
            self._sending_on = loop
            loop.call_soon(self._flush)
        self._waiting.append(request)

    def _flush(self) -> None:
        waiting = [r for r in self._waiting if not r.reply.done()]
        self._waiting = []
        self._sending_on = None
        loop = asyncio.get_running_loop()
        for chunk in self._chunks(waiting) if waiting else ():
            task = loop.create_task(self._send(chunk), name=self._name)
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)


def settle(reply: asyncio.Future[Any], exc: BaseException) -> None:
    """Fail a caller's reply with ``exc`` (cancel it for a cancellation), if still open."""
    if reply.done():
        return
    if isinstance(exc, asyncio.CancelledError):
        reply.cancel()
    else:
        reply.set_exception(exc)
