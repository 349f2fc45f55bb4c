"""A home told without the verb "live": "back in Dublin after two years in Berlin",
"settled in Glasgow now", "home is Lisbon these days", "Denver-based now".

Each names the place the speaker lives now. A visit is not a home: "back in Dublin for
the weekend", "settled in at the hotel" and "home is where the heart is" are read as
nothing, and the place must be one the gazetteer knows (a city or a country).
"""

from __future__ import annotations

import re

from slotwise.processors.rules import gazetteer
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.head.places import typed_place
from slotwise.processors.rules.head.spoken import own_or_bare
from slotwise.processors.rules.values import BOUNDARY, proper_noun, strip_the

__all__ = ["read_home_otherwise"]

_I = re.IGNORECASE

_LEAD = (
    r"^(?:(?:and|so|but|finally|anyway|well|just|recently|officially)\s+)*"
    r"(?:(?:I|we)(?:'m|'re|\s+am|\s+are|'ve|\s+have)?\s+)?(?:(?:just|finally|recently)\s+)?"
)
# "the berlin life is treating me well": the life of a place is lived there.
_LIFE = re.compile(
    r"^(?:(?:and|so|but|honestly)\s+)*(?:the\s+)?(?P<rest>[A-Za-z][\w ]{1,25}?)\s+life\s+"
    r"(?:is|has\s+been|suits|treating|agrees)\b",
    _I,
)
_HOME_OTHERWISE = (
    re.compile(
        _LEAD + r"(?:now\s+|finally\s+|officially\s+)?(?:back|settled|based)\s+(?:home\s+)?in\s+"
        r"(?P<rest>.+)$",
        _I,
    ),
    re.compile(r"^(?:(?:and|so|but)\s+)*home\s+is\s+(?:now\s+)?(?P<rest>.+)$", _I),
    re.compile(_LEAD + r"(?:now\s+)?(?P<rest>[A-Za-z][\w ]{1,30}?)-based\b", _I),
    # "now in nairobi for good", "we're in leeds these days": a stay said to be for good, or
    # to last, is a home.
    re.compile(
        _LEAD + r"(?:now\s+)?in\s+(?P<rest>.+?)\s+(?:for\s+good|permanently|these\s+days|"
        r"nowadays)\b",
        _I,
    ),
    # "we ended up settling in valencia": where a move came to rest.
    re.compile(
        _LEAD + r"ended\s+up\s+(?:living|settling|moving|buying|renting)\s+(?:in|to)\s+"
        r"(?P<rest>.+)$",
        _I,
    ),
    _LIFE,
)
# A stay, not a home: a visit, a holiday, a span that ends.
_VISIT = re.compile(
    r"\b(?:for\s+(?:the|a|an|two|three|few|couple|work|christmas|xmas|easter|holidays?|"
    r"summer|\d)|until|till|visiting|visit|trip|holiday|vacation|hotel|airbnb|conference|"
    r"this\s+(?:week|weekend)|tonight|today|heart|where|office|work\s+today)\b|\?",
    _I,
)


def read_home_otherwise(clause: Clause) -> list[Finding]:
    text = clause.text
    if _VISIT.search(text):
        return []
    for pattern in _HOME_OTHERWISE:
        found = pattern.search(text)
        if found is None:
            continue
        # "the berlin life" opens on "the" and is still the speaker's.
        if pattern is not _LIFE and not own_or_bare(clause):
            return []
        rest = strip_the(found["rest"])
        named = (None if clause.cased else typed_place(rest)) or proper_noun(
            rest, clause.cased, limit=3
        )
        if named is None or not BOUNDARY.match(named[1]):
            return []
        town = gazetteer.city_by_name(named[0])
        if town is not None:
            return [Finding("home_city", town.name, f"User lives in {town.name}.")]
        country = gazetteer.country(named[0])
        if country is not None:
            return [Finding("home_country", country, f"User lives in {country}.")]
        return []
    return []
