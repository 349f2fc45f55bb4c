"""Key-ordered concurrency: one subject at a time, many subjects at once.

Jobs with the same key run strictly one after another in submission order;
jobs with different keys run concurrently. The total of queued and running
jobs is what the worker compares with its in-flight bound to pause fetching
(backpressure instead of an unbounded buffer). This is the KEY ordering mode
of Confluent's Parallel Consumer, on asyncio.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Iterable

__all__ = ["KeyedScheduler"]

log = logging.getLogger(__name__)
_CANCEL_AGAIN_S = 1.0

Job = Callable[[], Awaitable[None]]


class KeyedScheduler:
    def __init__(self) -> None:
        self._queues: dict[Hashable, deque[Job]] = {}
        self._runners: dict[Hashable, asyncio.Task[None]] = {}
        self._pending = 0
        self._changed = asyncio.Event()

    @property
    def pending(self) -> int:
        """Jobs submitted and not yet finished."""
        return self._pending

    @property
    def active_keys(self) -> int:
        return len(self._runners)

    def submit(self, key: Hashable, job: Job) -> None:
        self._pending += 1
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
        queue.append(job)
        if key not in self._runners:
            self._runners[key] = asyncio.get_running_loop().create_task(
                self._run(key), name=f"subject:{key!r}"
            )

    async def _run(self, key: Hashable) -> None:
        queue = self._queues[key]
        try:
            while queue:
                job = queue[0]
                try:
                    await job()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    # Jobs route their own failures; reaching here is a bug, and
                    # one key's bug must not stop the others.
                    log.exception("job for %r raised", key)
                finally:
                    if queue:  # else cancel() has already detached and counted it
                        queue.popleft()
                        self._pending -= 1
                    self._changed.set()
        finally:
            self._detach(key, queue)

    def _detach(self, key: Hashable, queue: deque[Job]) -> None:
        """Forget ``queue`` and its runner, counting its jobs as no longer pending."""
        self._pending -= len(queue)
        queue.clear()
        if self._queues.get(key) is queue:
            del self._queues[key]
            del self._runners[key]
        self._changed.set()

    async def wait_below(self, bound: int) -> None:
        while self._pending >= bound:
            self._changed.clear()
            await self._changed.wait()

    async def drain(
        self, keys: Iterable[Hashable] | None = None, timeout: float | None = None
    ) -> bool:
        """Wait until the given keys (all when None) have no jobs; True if they drained in time."""
        wanted = None if keys is None else set(keys)

        async def idle() -> None:
            while any(wanted is None or k in wanted for k in self._runners):
                self._changed.clear()
                await self._changed.wait()

        try:
            await asyncio.wait_for(idle(), timeout)
        except TimeoutError:
            return False
        return True

    async def cancel(self, keys: Iterable[Hashable]) -> None:
        """Stop the runners of these keys and forget their queued jobs.

        The keys are detached at once rather than in the runners' own cleanup: a
        runner cancelled before its first step never executes its body, and would
        otherwise stay registered, swallowing every later job of its key.
        """
        tasks = []
        for key in list(keys):
            task, queue = self._runners.get(key), self._queues.get(key)
            if task is None or queue is None:
                continue
            self._detach(key, queue)
            task.cancel()
            tasks.append(task)
        pending = set(tasks)
        while pending:
            _, pending = await asyncio.wait(pending, timeout=_CANCEL_AGAIN_S)
            if pending:
                # A cancellation can be swallowed inside a client library, and the job
                # then goes on (a retry loop would forever): ask again until it stops.
                log.warning("%d cancelled jobs still run; cancelling them again", len(pending))
                for task in pending:
                    task.cancel()

    def keys(self) -> list[Hashable]:
        return list(self._runners)
