"""Whether two values are of one kind: what a correction naming only the right value
("*Leicester", "ugh autocorrect — it's Jon") can be taken to put right.

The held fact it corrects is the one whose value is of the new value's kind: both
addresses, both phone numbers, both counts of the same thing, both words of the slot's
closed vocabulary, both cities or both countries, or spellings of one word ("Jon" for
"John"). Anything else is not taken to be what the correction meant.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from slotwise.processors.rules.classifier import value_mentions
from slotwise.processors.rules.gazetteer import city, city_by_name, country

__all__ = ["in_vocabulary", "same_kind"]

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\+?[\d][\d ()-]{6,}\d")
# "3 cats" for "2 cats": a count of the same thing.
_COUNT = re.compile(r"(\d+)\s+(\w+?)s?")
# Spellings this close are one word mistyped: "jon"/"john", "pottery"/"poetry".
SPELLING_RATIO = 0.75
_MIN_SPELLING = 3


def in_vocabulary(attribute: str, value: str) -> str | None:
    """The canonical word of ``attribute``'s closed vocabulary that ``value`` is, whole."""
    mentions = value_mentions(attribute, value)
    if len(mentions) == 1 and (mentions[0][0], mentions[0][1]) == (0, len(value)):
        return mentions[0][2]
    return None


def same_kind(attribute: str, held: str, new: str) -> bool:
    """Whether ``new`` is a value of the kind ``held`` is, in ``attribute``."""
    held, new = held.strip(), new.strip()
    pairs = (
        (_EMAIL.fullmatch(held), _EMAIL.fullmatch(new)),
        (_PHONE.fullmatch(held), _PHONE.fullmatch(new)),
        (held.isdigit(), new.isdigit()),
        (in_vocabulary(attribute, held), in_vocabulary(attribute, new)),
        # The held value as the user spelt it ("Lisboa"); the new one by a city's own name.
        (city(held), city_by_name(new)),
        (country(held), country(new)),
    )
    if any(a and b for a, b in pairs):
        return True
    counts = _COUNT.fullmatch(held), _COUNT.fullmatch(new)
    if counts[0] and counts[1] and counts[0][2].casefold() == counts[1][2].casefold():
        return True
    if min(len(held), len(new)) < _MIN_SPELLING:
        return False
    return SequenceMatcher(None, held.casefold(), new.casefold()).ratio() >= SPELLING_RATIO
