"""Facts a turn implies from another it states: the timezone a home city keeps.

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

__all__ = ["CLOCK_TALK", "implied_timezone"]

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
    return [
        home.model_copy(
            update={
                "candidate_id": stable_id("rules-zone", home.candidate_id),
                "attribute": "timezone",
                "category": category,
                "value": place.timezone,
                "text": f"User's timezone is {place.timezone} (lives in {home.value}).",
                "confidence": min(home.confidence, INFERRED),
                "ongoing": False,
            }
        )
    ]
