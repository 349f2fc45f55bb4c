"""Which offsets may be committed: the lowest offset not yet fully applied.

Events of one partition finish out of order (different subjects run
concurrently), so an offset is committable only when every offset before it
in the partition is done. This is the guard against faust-streaming #606,
where a commit passed an in-flight offset: here an event's outputs and its
offset are released together, strictly in offset order, and nothing at or
above an unfinished offset leaves the ledger.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from slotwise.topics.outbound import Outbound

__all__ = ["PartitionLedger", "Release"]


@dataclass(frozen=True, slots=True)
class Release:
    """Outputs of a contiguous run of finished events, and the offset to commit after them."""

    messages: tuple[Outbound, ...]
    next_offset: int


class PartitionLedger:
    """In-flight and finished offsets of one partition, in consumption order."""

    def __init__(self, *, start: int = 0, quiet_below: int = 0) -> None:
        self._events: OrderedDict[int, tuple[Outbound, ...] | None] = OrderedDict()
        # Offsets below it were committed before, their outputs published: a replay that
        # heals a store gone behind the log releases only their offsets (recovery.py).
        self._quiet_below = quiet_below
        self._next = start  # the lowest offset not taken yet: where the partition was assigned

    def track(self, offset: int) -> bool:
        """Take the event at ``offset`` in; False, taking nothing, when the offset was
        taken before (or lies below the start): the consumer delivered it again, and is to
        be sent back to :attr:`next_offset`."""
        if offset < self._next:
            return False
        self._events[offset] = None
        self._next = offset + 1
        return True

    @property
    def next_offset(self) -> int:
        return self._next

    def complete(self, offset: int, messages: tuple[Outbound, ...]) -> None:
        if offset not in self._events:
            raise KeyError(f"offset {offset} is not in flight")
        self._events[offset] = () if offset < self._quiet_below else messages

    def release(self) -> Release | None:
        """Pop the finished prefix; None when the lowest tracked offset is still running."""
        released: list[Outbound] = []
        last: int | None = None
        while self._events:
            offset, messages = next(iter(self._events.items()))
            if messages is None:
                break
            self._events.popitem(last=False)
            released.extend(messages)
            last = offset
        if last is None:
            return None
        return Release(messages=tuple(released), next_offset=last + 1)

    @property
    def quiet_below(self) -> int:
        return self._quiet_below

    @property
    def in_flight(self) -> int:
        return sum(1 for messages in self._events.values() if messages is None)

    @property
    def held(self) -> int:
        """Events tracked but not yet released (running, or finished behind a running one)."""
        return len(self._events)

    @property
    def lowest_unfinished(self) -> int | None:
        for offset, messages in self._events.items():
            if messages is None:
                return offset
        return None
