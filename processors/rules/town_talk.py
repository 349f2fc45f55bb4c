"""A home named through its city without the city's name as a value: the speaker as one
of its people ("we're londoners now") or out of it for good ("finally out of london").

The city is taken from the word by the gazetteer, by its own name, so "a vegetarian now"
or "out of milk" name no place. Like the rest of the uncertain middle's words, they only
ever make a question about the home city, never a value.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.gazetteer import city_by_name

__all__ = ["left_town", "town_now", "town_to_town", "townsfolk"]

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
    r"out\s+of\s+([a-z]+(?:\s+[a-z]+)?)|"
    # "finally left london": a city left for good, not "left london at 6am" for a day.
    r"\bfinally\s+left\s+([a-z]+(?:\s+[a-z]+)?)",
    _I,
)


# A goodbye said to a city: "bye london 👋", "farewell berlin, hello porto".
_FAREWELL = re.compile(
    r"\b(?:bye(?:\s+bye)?|goodbye|farewell|so\s+long|adios|adi[oó]s|adeus|tchau|ciao)\s+"
    r"(?:to\s+)?([a-z]+(?:\s+[a-z]+)?)",
    _I,
)


def _known(words: list[str]) -> bool:
    return any(city_by_name(" ".join(words[:n])) is not None for n in (1, 2))


def left_town(text: str) -> bool:
    """Whether the clause has the speaker out of a city the gazetteer knows by its name."""
    found = [*_OUT_OF.finditer(text), *_FAREWELL.finditer(text)]
    return any(_known((m.group(1) or m.group(2)).split()) for m in found)


# One place to the next by an arrow: "NYC → LA", "berlin -> lisbon", "Leeds ➡️ York".
_ARROW = re.compile(
    r"(?:^|[\s(])([A-Za-z][\w.'-]*(?:\s+[A-Za-z][\w.'-]*)?)\s*(?:→|->|=>|➡\ufe0f?|⟶)\s*"
    r"([A-Za-z][\w.'-]*(?:\s+[A-Za-z][\w.'-]*)?)"
)
# Initials a writer gives a city in capitals: "NYC", "LA", "SF".
_INITIALS = re.compile(r"^[A-Z]{2,4}$")


def town_to_town(text: str) -> bool:
    """Whether the clause puts an arrow from one city to another: either end a city the
    gazetteer knows by its name, or both ends a city's initials. A trip is told the same
    way, so the caller asks only when the clause says the change is done."""
    for m in _ARROW.finditer(text):
        ends = [m.group(1).split(), m.group(2).split()]
        if any(_known(words) or _known(words[-1:]) for words in ends):
            return True
        if all(len(words) == 1 and _INITIALS.match(words[0]) for words in ends):
            return True
    return False


# A clause that opens on a city and "now", the city its subject of nothing ("london now has
# a new mayor" is about London).
_TOWN_NOW = re.compile(
    r"^(?:(?:we're|i'm|im|we\s+are|i\s+am)\s+)?(?:(?:in|living\s+in|based\s+in)\s+)?"
    r"([^\W\d_]+(?:\s+[^\W\d_]+)?)\s+now\b"
    r"(?!\s+(?:has|have|is|are|was|were|got|gets|looks|feels|seems|says|said)\b)",
    _I,
)
# An itinerary says where next: "paris now, rome tomorrow".
_NEXT_STOP = re.compile(
    r"\b(?:tomorrow|tonight|then|till|until|next|later|after\s+that|back\s+home)\b", _I
)


def town_now(text: str) -> bool:
    """Whether the clause is a city the gazetteer knows by its name, said with "now" and no
    next stop."""
    found = _TOWN_NOW.match(text)
    return found is not None and _known(found.group(1).split()) and not _NEXT_STOP.search(text)
