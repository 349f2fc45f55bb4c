"""What every head rule shares: its lead patterns, and the clause reworded about "User"."""

from __future__ import annotations

import re

from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.wording import ADVERBS, third_person

__all__ = ["AM", "compile_all", "first_match", "say"]

_I = re.IGNORECASE

AM = rf"I(?:'m|\s+am){ADVERBS}"


def compile_all(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, _I) for p in patterns)


def first_match(patterns: tuple[re.Pattern[str], ...], text: str) -> re.Match[str] | None:
    for pattern in patterns:
        found = pattern.match(text)
        if found is not None:
            return found
    return None


def say(clause: Clause, *values: str) -> str:
    """The clause about "User", with each value in its canonical spelling."""
    text = third_person(clause.text)
    for value in values:
        found = re.search(re.escape(value), text, _I)
        if found is not None:
            text = text[: found.start()] + value + text[found.end() :]
    return text
