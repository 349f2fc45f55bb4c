"""Which home slot a place name fills: a city, a region or a country; and a home told by
how long the speaker has been in its city.

A library (the gazetteer) knows an uncased name; a capitalised unknown one is taken as a
city. Names that are a city in one reading and something else in another are refused.
"""

from __future__ import annotations

import re

from slotwise.processors.rules import gazetteer
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.town_talk import STAY
from slotwise.processors.rules.values import BOUNDARY, proper_noun, strip_the
from slotwise.processors.rules.words import AMBIGUOUS_PLACES, COMMON_WORD_PLACES, PLANS

__all__ = [
    "home_place",
    "move_to_unknown",
    "place_kind",
    "read_home_since",
    "spelled_out",
    "typed_place",
]

_I = re.IGNORECASE


def place_kind(place: str, cased: bool) -> tuple[str, str] | None:
    """``(attribute, canonical)`` for a place name; None when no library knows an uncased one."""
    if place[:1].islower() and place.casefold() in COMMON_WORD_PLACES:
        # "moved into our new place in spring": written in lower case, the season, not the
        # town in Texas of the same name.
        return None
    if place.casefold() in AMBIGUOUS_PLACES or place.casefold() in PLANS:
        # Georgia, Washington, Victoria: a city in one reading, a state in another; "Team",
        # "Pro": a plan the speaker moved to.
        return None
    country = gazetteer.country(place)
    if country is not None:
        return "home_country", country
    region = gazetteer.region(place)
    if region is not None:
        return "home_region", region
    if gazetteer.city(place) is not None or (cased and place[:1].isupper()):
        return "home_city", spelled_out(place)
    return None


def spelled_out(place: str) -> str:
    """The city's name for its initials ("sf", "NYC", "LA"); any other name as given."""
    town = gazetteer.city(place)
    initials = "".join(word[:1] for word in town.name.split()) if town is not None else ""
    if town is not None and place.casefold() == initials.casefold() and len(initials) > 1:
        return town.name
    return place


def typed_place(rest: str) -> tuple[str, str] | None:
    """The longest opening of ``rest``'s first words, as typed in lower case, that the
    gazetteer knows as a city or a country, and the text after it: "cape town since march"
    is Cape Town, though "town" alone is an everyday word and "since" no name."""
    words = list(re.finditer(r"[^\W\d_][\w'-]*", rest))[:3]
    if not words or rest[: words[0].start()].strip():
        return None
    for size in range(len(words), 0, -1):
        typed = rest[words[0].start() : words[size - 1].end()]
        if typed.casefold() in COMMON_WORD_PLACES or typed.casefold() in AMBIGUOUS_PLACES:
            continue
        town = gazetteer.city_by_name(typed)
        name = town.name if town is not None else gazetteer.country(typed)
        if name is not None:
            return name, rest[words[size - 1].end() :]
    return None


def home_place(rest: str, cased: bool) -> tuple[str, str] | None:
    """The home slot and value of the place a clause's ``rest`` opens with."""
    the = re.match(r"^the\s+(\w+)", rest, _I)
    if the is not None and gazetteer.country(the.group(0)) is not None:
        return "home_country", gazetteer.country(the.group(0)) or ""
    stripped = strip_the(rest)
    if stripped != rest and stripped[:1].islower():
        # "we're in the car now", "in the pub": a city goes without "the" (Car and Pub are
        # towns' other names); one that keeps it is written "The Hague".
        return None
    rest = stripped
    typed = None if cased else typed_place(rest)
    if typed is not None and BOUNDARY.match(typed[1]):
        return place_kind(typed[0], cased)
    found = proper_noun(rest, cased, limit=3)
    if found is None or not BOUNDARY.match(found[1]):
        return None
    written = rest[: len(rest) - len(found[1])].strip()
    # The library's canonical spelling is capitalised: the guard reads what was typed.
    if written[:1].islower() and written.casefold() in COMMON_WORD_PLACES:
        return None
    return place_kind(found[0], cased)


_MOVED = re.compile(r"\b(?:moved|relocated)\b", _I)


def move_to_unknown(text: str, place: str) -> bool:
    """ "I moved to Atlassian in march": a move to a name no library knows as a place may be
    a move of job; the change is asked about, not guessed."""
    known = (gazetteer.city(place), gazetteer.country(place), gazetteer.region(place))
    return bool(_MOVED.search(text)) and not any(known)


# A city opening the clause and how long the speaker has lived there: "new york since the
# fall", "phoenix since may", "three months in melbourne now", "two weeks into life in
# bangkok". Since a weekday or an hour, it is a trip ("kumasi since thursday").
_CITY = r"(?P<city>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*)?)"
_HOME_SINCE = tuple(
    re.compile(p, _I)
    for p in (
        rf"^{_CITY}\s+since\s+(?!(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
        r"yesterday|today|this\s+morning|last\s+night|\d{1,2}(?::\d\d)?\s*(?:am|pm)?\b))",
        r"^(?:(?:a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|\d+|a\s+few|few|"
        r"several)\s+(?:months?|years?)\s+in|(?:a|one|two|three|four|five|six|\d+|a\s+few|few)\s+"
        rf"(?:days?|weeks?|months?|years?)\s+into\s+(?:life|living)\s+in)\s+{_CITY}"
        r"(?:\s+now\b|\s*$|\s+and\b)",
    )
)
# Besides a trip or a visit, an itinerary: "lisbon since the spring, porto next month".
_NEXT_STOP = re.compile(r"\b(?:next|tomorrow|tonight|then|after\s+that)\b", _I)


# The city is someone else's, or the clause's subject: "melbourne since 2019 is my
# cousin's whole personality".
_NOT_MINE = re.compile(
    r"\b(?:he|she|they|his|her|their|hers|theirs)\b|"
    r"\b(?!(?:it|that|what|there|here|let)'s\b)\w+'s\b|\bsince\s+[^,;]{1,25}?\s+(?:is|was|has|are)\b",
    _I,
)


def read_home_since(clause: Clause) -> list[Finding]:
    """The home city a clause opens on and dates the speaker's stay in, when the stay is
    no trip; only a city the gazetteer knows by its name."""
    if STAY.search(clause.text) or _NEXT_STOP.search(clause.text) or _NOT_MINE.search(clause.text):
        return []
    for pattern in _HOME_SINCE:
        found = pattern.search(clause.text)
        if found is None:
            continue
        words = found["city"].split()
        for size in range(len(words), 0, -1):
            typed = " ".join(words[:size])
            if typed.casefold() in COMMON_WORD_PLACES or typed.casefold() in AMBIGUOUS_PLACES:
                continue
            town = gazetteer.city_by_name(typed)
            if town is not None and (size == len(words) or pattern is _HOME_SINCE[1]):
                return [Finding("home_city", town.name, f"User lives in {town.name}.")]
    return []
