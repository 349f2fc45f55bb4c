"""The stores' Lua scripts, as Redis runs them: ``lua/<name>``, its includes spelled out.

A line ``-- include: <file>`` in a script is replaced by that file of ``lua/``
when the script is loaded, so a rule several scripts keep is defined once
(``lua/slot_index.lua``: a fact is in the slot index iff it is current) and
each script still reaches Redis as one self-contained source.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

__all__ = ["lua_script"]

_INCLUDE = re.compile(r"^-- include: (\S+)$", re.MULTILINE)


@functools.cache
def _read(name: str) -> str:
    return resources.files("slotwise.sinks.redis").joinpath("lua", name).read_text(encoding="utf-8")


@functools.cache
def lua_script(name: str) -> str:
    """The source of ``lua/<name>`` with its includes in place (each include once)."""
    return _INCLUDE.sub(lambda m: _read(m.group(1)).rstrip("\n"), _read(name))
