"""The CLI in a process that SIGKILLs itself at a chosen call: a crash at a known point.

    python -m tests.e2e.killpoint TARGET WHEN NTH migrate ARGS...

runs ``slotwise migrate ARGS...`` with ``TARGET`` (``module:Name.attribute``,
e.g. ``slotwise.sinks.redis.migration:MigrationStore.begin``) wrapped so that
its ``NTH`` call sends the process SIGKILL ``before`` or ``after`` running. A
process killed there exits with -9, as one killed from outside at that moment
would; one that never reached it exits as the command does, which a test tells
apart. Nothing in the package knows about it. Only the ``migrate`` commands are
loaded, not the whole CLI: the rest (the LLM client's imports above all) would
add 3 s to every killed process and nothing to what it runs.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any

from slotwise.streams.cli.migrate import migrate_app

__all__ = ["KillPoint"]


@dataclass(frozen=True)
class KillPoint:
    """SIGKILL at the ``nth`` call of ``target``, ``before`` or ``after`` it runs."""

    target: str
    when: str = "after"
    nth: int = 1

    def argv(self) -> list[str]:
        return [sys.executable, "-m", "tests.e2e.killpoint", self.target, self.when, str(self.nth)]

    def plant(self) -> None:
        module, _, qualified = self.target.partition(":")
        owner: Any = importlib.import_module(module)
        *path, name = qualified.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, name)
        calls = 0

        def due(moment: str) -> None:
            if calls == self.nth and self.when == moment:
                os.kill(os.getpid(), signal.SIGKILL)

        if inspect.iscoroutinefunction(original):

            @functools.wraps(original)
            async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
                nonlocal calls
                calls += 1
                due("before")
                result = await original(*args, **kwargs)
                due("after")
                return result

            setattr(owner, name, wrapped_async)
        else:

            @functools.wraps(original)
            def wrapped(*args: Any, **kwargs: Any) -> Any:
                nonlocal calls
                calls += 1
                due("before")
                result = original(*args, **kwargs)
                due("after")
                return result

            setattr(owner, name, wrapped)


def main(argv: list[str]) -> None:
    target, when, nth, group, *args = argv
    if when not in {"before", "after"} or group != "migrate":
        raise SystemExit("usage: python -m tests.e2e.killpoint TARGET before|after NTH migrate ...")
    KillPoint(target, when, int(nth)).plant()
    migrate_app(args, prog_name="slotwise migrate")


if __name__ == "__main__":
    main(sys.argv[1:])
