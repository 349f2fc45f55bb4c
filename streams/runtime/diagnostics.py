"""What a worker that seems stuck is doing: every thread's and every task's stack.

``kill -USR1 <pid>`` logs them; nothing else about the worker changes.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import traceback
from types import FrameType
from typing import Any

__all__ = ["log_stacks"]

log = logging.getLogger(__name__)


def log_stacks() -> None:
    """Log the stack of every thread and of every task of the running event loop."""
    names = {t.ident: t.name for t in threading.enumerate()}
    parts: list[str] = []
    for ident, frame in sys._current_frames().items():
        parts.append(f"--- thread {names.get(ident, ident)}\n")
        parts.extend(traceback.format_stack(frame))
    for task in asyncio.all_tasks():
        frames, awaiting = _awaits(task.get_coro())
        summary = traceback.StackSummary.extract((f, f.f_lineno) for f in frames)
        parts.append(
            f"--- task {task.get_name()}, awaiting {awaiting!r}, "
            f"cancel requests {task.cancelling()}\n"
        )
        parts.extend(summary.format())
    log.warning("stacks on request:\n%s", "".join(parts))


def _awaits(coro: Any) -> tuple[list[FrameType], object]:
    """The frames of a suspended coroutine down its await chain, and what the last awaits.

    ``Task.get_stack`` stops at the outermost frame of a suspended task, which
    says where a task is only when nothing is nested.
    """
    frames: list[FrameType] = []
    while True:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            return frames, coro
        frames.append(frame)
        inner = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
        if inner is None:
            return frames, None
        coro = inner
