"""Facts a turn implies from another it states: the timezone a home city keeps, the
language a native language is.

A move to Lisbon implies ``Europe/Lisbon`` (the gazetteer's IANA zone), and a
stored timezone would otherwise go stale. The labelled data's convention
(datasets/README.md, "Timezones") is that a residence city alone gives only
``home_city``; ``timezone`` is stated only when the turn talks about time. So
the zone is derived only then ("relocated to lisbon, same clock as london"),
and never beside a zone the user names, which is kept as written.
"""

from __future__ import annotations

import re

from slotwise.processors.model import stable_id
from slotwise.processors.rules.findings import INFERRED
from slotwise.processors.rules.gazetteer import city
from slotwise.topics.records import CandidateFact

__all__ = ["CLOCK_TALK", "implied_timezone", "native_spoken"]

# The turn is about the clock: how far ahead or behind, the same time, a time zone.
CLOCK_TALK = re.compile(
    r"\b(?:same\s+(?:clock|time(?:\s*zone)?|hours)|clocks?|time\s*zones?|jet\s*lag(?:ged)?|"
    r"(?:an?|\d+|one|two|three|four|five|six|seven|eight|nine|ten|few)\s+(?:hours?|hrs?|h)\s+"
    r"(?:ahead|behind|earlier|later)|(?:my|local)\s+time|my\s+(?:morning|afternoon|evening))\b",
    re.IGNORECASE,
)


def implied_timezone(
    candidates: list[CandidateFact], turn: str, category: str | None
) -> list[CandidateFact]:
    """A ``timezone`` candidate from the turn's one home city, when the turn talks about
    time and names no zone itself; otherwise none."""
    if not CLOCK_TALK.search(turn) or any(c.attribute == "timezone" for c in candidates):
        return []
    homes = [c for c in candidates if c.attribute == "home_city" and isinstance(c.value, str)]
    places = {city(str(c.value)) for c in homes}
    if len(homes) != 1 or len(places) != 1 or None in places:
        return []
    home, (place,) = homes[0], places
    assert place is not None
    text = f"User's timezone is {place.timezone} (lives in {home.value})."
    zone = _implied(
        home, "rules-zone", "timezone", category=category, value=place.timezone, text=text
    )
    return [zone.model_copy(update={"stated_change": home.stated_change})]


def _implied(
    source: CandidateFact, tag: str, attribute: str, *, category: str | None, value: str, text: str
) -> CandidateFact:
    """The fact ``source`` implies: its observation and dates, no surer than an inference,
    and no change stated of its own."""
    return source.model_copy(
        update={
            "candidate_id": stable_id(tag, source.candidate_id),
            "attribute": attribute,
            "category": category,
            "value": value,
            "text": text,
            "confidence": min(source.confidence, INFERRED),
            "ongoing": False,
            "stated_change": False,
        }
    )


def native_spoken(candidates: list[CandidateFact], category: str | None) -> list[CandidateFact]:
    """A ``languages`` candidate for each native language the turn states and does not
    also list: one speaks one's native language ("portuguese is my first language")."""
    spoken = {str(c.value).casefold() for c in candidates if c.attribute == "languages"}
    return [
        _implied(
            c,
            "rules-native",
            "languages",
            category=category,
            value=str(c.value),
            text=f"User speaks {c.value}.",
        )
        for c in candidates
        if c.attribute == "native_language"
        and c.value is not None
        and str(c.value).casefold() not in spoken
    ]
