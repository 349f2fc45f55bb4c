"""One spelling of a duration on every command, and the deprecation lines of old spellings.

Durations are ``30s``, ``15m``, ``6h``, ``7d`` (a decimal is fine: ``1.5h``). A bare
number is the old spelling: it still means what the option meant before (seconds,
or days for ``--grace``) and prints one deprecation line on stderr, so scripts keep
working for a release while they are fixed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

import typer

__all__ = ["deprecated", "duration", "duration_days", "old_name"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86_400.0}
_F = TypeVar("_F", bound=Callable[..., Any])


def deprecated(line: str) -> None:
    """One line on stderr: stdout stays what scripts parse."""
    typer.echo(f"deprecated: {line}", err=True)


def _parse(text: str | float, bare_unit: str) -> float:
    if not isinstance(text, str):
        # An option's own default arrives already in its unit; only typed input is text.
        return float(text) * _SECONDS[bare_unit[0]]
    found = _DURATION.match(text)
    if found is None:
        raise typer.BadParameter(f"{text!r}: a duration like 30s, 15m, 6h or 7d")
    amount, unit = float(found[1]), found[2]
    if not unit:
        deprecated(f"a bare number ({text}) is read as {bare_unit}; write {text}{bare_unit[0]}")
        unit = bare_unit[0]
    return amount * _SECONDS[unit]


def duration(text: str | float) -> float:
    """``30s``, ``15m``, ``6h``, ``7d`` → seconds; a bare number is seconds (deprecated)."""
    return _parse(text, "seconds")


def duration_days(text: str | float) -> float:
    """The same, in days: ``--grace 7d``; a bare number is days (deprecated)."""
    return _parse(text, "days") / _SECONDS["d"]


def old_name(command: _F, old: str, new: str) -> _F:
    """``command`` under its old spelling: the same options, and a deprecation line first."""

    @functools.wraps(command)
    def aliased(*args: Any, **kwargs: Any) -> Any:
        deprecated(f"`slotwise {old}` is now `slotwise {new}`; the old name goes in a release")
        return command(*args, **kwargs)

    return aliased  # type: ignore[return-value]
