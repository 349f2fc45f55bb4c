"""What a rule reads in a clause, and how sure it is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from slotwise.processors.rules.clauses import Clause

__all__ = ["DIRECT", "INFERRED", "Finding", "Rule"]

DIRECT = 0.9
INFERRED = 0.75


@dataclass(frozen=True, slots=True)
class Finding:
    """What a rule read in a clause, before it becomes a CandidateFact."""

    attribute: str | None
    value: str | int | None
    text: str
    confidence: float = DIRECT
    # Read as the right value beside the wrong one ("vegan, not vegetarian"): a correction,
    # which lets a high-stakes slot move like a stated change.
    corrected: bool = False


Rule = Callable[[Clause], list[Finding]]
