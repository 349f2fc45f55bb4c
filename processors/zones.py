"""Timezone values that name one zone: "Central Time", "CST" and America/Chicago.

A user keeps the name they give ("CET", "Pacific Time"); the store may hold the
IANA zone a city implied. Read as the abbreviation each keeps in winter, they
compare equal, so "I'm on Central Time" re-confirms America/Chicago instead of
superseding it.
"""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime

__all__ = ["same_zone"]

# What people call a zone instead of its IANA name, as the abbreviation it keeps in winter.
_ZONE_NAMES = {
    "pacific time": "PST", "mountain time": "MST", "central time": "CST",
    "eastern time": "EST", "atlantic time": "AST", "uk time": "GMT", "london time": "GMT",
}  # fmt: skip
_WINTER = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)


def same_zone(a: object, b: object) -> bool:
    """A named zone ("Central Time", "CET") and an IANA zone that keeps it are one value.

    Two IANA names are compared as names: Kuala Lumpur is not Singapore, though
    their clocks agree.
    """
    keys = [_zone_key(str(v)) for v in (a, b)]
    iana = [k[1] for k in keys]
    return None not in (keys[0][0], keys[1][0]) and keys[0][0] == keys[1][0] and not all(iana)


def _zone_key(value: str) -> tuple[str | None, bool]:
    name = " ".join(value.split())
    if "/" in name:
        try:
            return _WINTER.astimezone(zoneinfo.ZoneInfo(name)).tzname(), True
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            return None, False
    lowered = name.casefold()
    if lowered in _ZONE_NAMES:
        return _ZONE_NAMES[lowered], False
    return (name.upper(), False) if name.isalpha() and 2 < len(name) <= 5 else (None, False)
