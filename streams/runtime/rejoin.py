"""How long the worker's consumer has been out of its group since its partitions were lost.

A static member whose session expired during a broker outage has been seen
never to rejoin (librdkafka #3437): no assignment comes, and the worker would
idle with its partitions owned by no one. Past a bound, the worker replaces its
consumer; the new one joins under the same instance id and is assigned the
partitions again, from the last commit, like any new owner.

The rebalance callbacks (poll thread) write it and the run loop reads it; each
is one assignment of a float, which needs no lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["RejoinWatch"]


class RejoinWatch:
    def __init__(self, timeout_s: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._timeout_s = timeout_s
        self._monotonic = monotonic
        self._out_since: float | None = None

    def lost(self) -> None:
        """The partitions were lost: the consumer is out until it is assigned again."""
        self._out_since = self._monotonic()

    def assigned(self) -> bool:
        """Any assignment, even an empty one, means the consumer is in the group again.
        True when it had been out."""
        was_out, self._out_since = self._out_since is not None, None
        return was_out

    def replaced(self) -> None:
        """A new consumer is subscribing: it gets the whole bound to join."""
        self._out_since = self._monotonic()

    @property
    def out_for_s(self) -> float:
        return 0.0 if self._out_since is None else self._monotonic() - self._out_since

    @property
    def overdue(self) -> bool:
        return self._out_since is not None and self.out_for_s > self._timeout_s
