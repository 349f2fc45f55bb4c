"""The clock of the write path: the time the record being applied carries.

Transaction time (``recorded_at``) is when the log received the record, not
when a worker happened to process it: the Kafka timestamp of a write, the
``issued_at`` of a command (published with the time it was sent, so a pass
evaluated at an old ``--as-of`` is not aged out of the topic by its own
timestamp: ``streams/commands/log.py``). Taking it from the record makes a
replay after a crash, or a second worker group rebuilding state from the same
log, write byte-identical facts and events.
"""

from __future__ import annotations

import contextvars
from datetime import UTC, datetime

__all__ = ["event_time", "now"]

_EVENT_TIME: contextvars.ContextVar[datetime | None] = contextvars.ContextVar(
    "slotwise_event_time", default=None
)


def event_time(value: datetime | None) -> None:
    """Set the time of the record this task is applying (the task's context only)."""
    _EVENT_TIME.set(value)


def now() -> datetime:
    return _EVENT_TIME.get() or datetime.now(tz=UTC)
