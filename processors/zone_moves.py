"""A move's implied time zone, weighed against the zone the subject holds.

"I moved to Toronto" states a home city; the zone that city keeps is implied, not
said, so the offline reader asks about the timezone with the city's IANA zone as
a tentative value. When every zone the slot holds is itself an IANA name the
comparison is exact: the same zone is a re-confirmation, another one went stale
with the move. A zone held as an abbreviation or an offset ("CET", "UTC+2") cannot
be compared with a city's zone without guessing, so that stays a question.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from zoneinfo import available_timezones

from slotwise.topics.records import CandidateFact, Fact

__all__ = ["implied_zone_comparable"]


@cache
def _zones() -> frozenset[str]:
    # Region zones only: the legacy keys ("CET", "EST", "UTC") are abbreviations a user
    # may have typed, which the README's convention keeps as written.
    return frozenset(z for z in available_timezones() if "/" in z and not z.startswith("Etc/"))


def implied_zone_comparable(candidate: CandidateFact, held: Sequence[Fact]) -> bool:
    """The candidate is a timezone question carrying an IANA zone, and every current
    fact of the slot holds an IANA zone too."""
    if candidate.attribute != "timezone" or not isinstance(candidate.value, str):
        return False
    zones = _zones()
    return (
        candidate.value in zones
        and bool(held)
        and all(isinstance(f.value, str) and f.value in zones for f in held)
    )
