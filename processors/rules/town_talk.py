"""A home named through its city without the city's name as a value: the speaker as one
of its people ("we're londoners now") or out of it for good ("finally out of london").

The city is taken from the word by the gazetteer, by its own name, so "a vegetarian now"
or "out of milk" name no place. Like the rest of the uncertain middle's words, they only
ever make a question about the home city, never a value, with two exceptions read from
the whole turn: a city said with "now" while the turn puts the speaker hours ahead of or
behind the people they used to share a clock with ("perth now! 3 hrs behind everyone at
work"), and a city greeted or praised in the turn that leaves another for good ("bye
paris, hello lyon", "finally left cape town, and durban has been good to us").
"""

from __future__ import annotations

import re

from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.gazetteer import city_by_name

__all__ = ["STAY", "left_town", "read_town_in_turn", "town_now", "town_to_town", "townsfolk"]

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
    # "finally left london", "left tokyo for good": a city left for good, not "left london
    # at 6am" for a day.
    r"\bfinally\s+left\s+([a-z]+(?:\s+[a-z]+)?)|\bleft\s+([a-z]+(?:\s+[a-z]+)?)\s+for\s+good\b",
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
    return any(_known(_left(m).split()) for m in found)


def _left(found: re.Match[str]) -> str:
    """The city a leaving or a farewell names, whichever of the patterns' groups holds it."""
    return next((g for g in found.groups() if g), "")


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


# The turn sets the speaker's clock against others': "3 hrs behind everyone at work", "an
# hour ahead of my team".
_HOURS_APART = re.compile(
    r"\b(?:an?|\d+|one|two|three|four|five|six|seven|eight|nine|ten|few)\s+(?:hours?|hrs?|h)\s+"
    r"(?:ahead|behind)\b",
    _I,
)
# A stay, not a home: a trip, a visit, a holiday, or one with its end in view. A trip is
# said with a clock too ("8 hours ahead for a week"), so a turn that names one is no move.
STAY = re.compile(
    r"\b(?:trip|travel\w*|conference|holiday|vacation|visit\w*|week(?:end)?s?\s+away|funeral|"
    r"wedding|for\s+work|for\s+(?:a|the|one|two|\d+)\s+(?:days?|weeks?|week(?:end)?)|till|until|"
    r"back\s+(?:home|on|in|next)|flight|flying|heading|return\w*|layover|jet\s*lag\w*|hotel|"
    r"airbnb|hostel|tour|backpacking|sabbatical|business|see\s+you)\b",
    _I,
)
# A city welcomed or praised in a turn that leaves another: "hello lyon", "durban has been
# good to us", "marseille is great so far".
_WELCOMED = re.compile(
    r"\b(?:hello|hi|hola|ol[aá])\s+(?P<hello>[^\W\d_]+(?:\s+[^\W\d_]+)?)|"
    r"(?:^|[,;:.!]\s*(?:and\s+|but\s+)?)(?P<praised>[^\W\d_]+(?:\s+[^\W\d_]+)?)\s+"
    r"(?:has\s+been|is|'s\s+been|'s|feels)\s+(?:so\s+|really\s+|very\s+)?"
    r"(?:good|great|lovely|amazing|nice|kind|home|fine|fab\w*|brilliant|wonderful|awesome)\b",
    _I,
)


def _town(words: str) -> str | None:
    """The gazetteer's name for the city ``words`` open with, by one or two words."""
    split = words.split()
    for size in (2, 1):
        town = city_by_name(" ".join(split[:size])) if len(split) >= size else None
        if town is not None:
            return town.name
    return None


def read_town_in_turn(text: str) -> list[Finding]:
    """The home city a whole turn tells without a verb of living: a city said with "now"
    and the speaker's hours apart from others, or a city welcomed after another was left."""
    if STAY.search(text):
        return []
    sentences = [s.strip() for s in re.split(r"[!.;]+|,\s+", text) if s.strip()]
    if _HOURS_APART.search(text):
        now = [m for m in (_TOWN_NOW.match(s) for s in sentences) if m is not None]
        towns = {t for t in (_town(m.group(1)) for m in now) if t is not None}
        if len(towns) == 1 and not _NEXT_STOP.search(text):
            (town,) = towns
            return [Finding("home_city", town, f"User lives in {town}.")]
    if left_town(text):
        left = {_town(_left(m)) for m in [*_OUT_OF.finditer(text), *_FAREWELL.finditer(text)]}
        named = (
            _town(m.group("hello") or m.group("praised") or "") for m in _WELCOMED.finditer(text)
        )
        welcomed = {t for t in named if t is not None and t not in left}
        if len(welcomed) == 1:
            (town,) = welcomed
            return [Finding("home_city", town, f"User lives in {town}.")]
    return []
