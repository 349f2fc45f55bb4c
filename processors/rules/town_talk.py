"""A home named through its city without the city's name as a value: the speaker as one
of its people ("we're londoners now") or out of it for good ("finally out of london").

The city is taken from the word by the gazetteer, by its own name, so "a vegetarian now"
or "out of milk" name no place. Like the rest of the uncertain middle's words, they only
ever make a question about the home city, never a value.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.gazetteer import city_by_name

__all__ = ["left_town", "townsfolk"]

_I = re.IGNORECASE

# The speaker named as one of a city's people: "we're londoners now", "a new yorker now".
_FOLK = re.compile(
    r"\b(?:i'm|im|i\s+am|we're|we\s+are|were|officially|proper|true|real|a|an)\s+"
    r"(?:a\s+|an\s+|proper\s+|true\s+|real\s+)?((?:new\s+|san\s+|los\s+|st\.?\s+)?[a-z]{3,})"
    r"(?:ers?|ians?|ites?|eans?)\b",
    _I,
)


def townsfolk(text: str) -> bool:
    """Whether the clause calls the speaker one of a city's people, the city taken from
    the word by its own name (London from "londoner", Boston from "bostonian")."""
    return any(
        city_by_name(town) is not None or city_by_name(f"{town} city") is not None
        for town in (m.group(1) for m in _FOLK.finditer(text))
    )


# The speaker out of a city for good: "after 6 years we're finally out of london".
_OUT_OF = re.compile(
    r"\b(?:we're|we\s+are|i'm|im|i\s+am|finally|got|get|getting|moved)\s+(?:finally\s+|now\s+)?"
    r"out\s+of\s+([a-z]+(?:\s+[a-z]+)?)",
    _I,
)


def left_town(text: str) -> bool:
    """Whether the clause has the speaker out of a city the gazetteer knows by its name."""
    for m in _OUT_OF.finditer(text):
        words = m.group(1).split()
        if any(city_by_name(" ".join(words[:n])) is not None for n in (1, 2)):
            return True
    return False
