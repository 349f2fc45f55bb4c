"""Corrections that name the wrong value beside the right one: "vegetarian, not vegan".

The clause has a "not", so the negation guard keeps the ordinary rules from it;
but the "not" only points at the old value. When the clause is ``<statement>, not
<old>`` and the statement ends on the value a rule reads, or is a bare value of a
closed vocabulary whose old value is of the same vocabulary ("mariadb, not
mysql"), the statement is read alone. Anything else stays unread: "I'm not
british" with nothing after it is a bare negation, not a correction.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from slotwise.processors.rules.clauses import NEGATION, Clause
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.words import DATABASES, DIETS

__all__ = ["read_correction", "read_replacement"]

_I = re.IGNORECASE
_CONTRAST = re.compile(r"^(?P<keep>.+?),?\s+not\s+(?P<old>[\w' .+#-]{1,40}?)[\s.!]*$", _I)
_LEAD = re.compile(
    r"^(?:(?:small\s+|quick\s+)?correction\s*:?\s*|sorry,?\s+|(?:ugh\s+)?autocorrect,?\s+|"
    r"I\s+meant\s+|it's\s+|it\s+is\s+)+",
    _I,
)
# The closed vocabularies a bare value is read from, as the labelled data spells them.
_BARE: dict[str, dict[str, str]] = {
    "database": {**DATABASES, "postgres": "PostgreSQL", "postgresql": "PostgreSQL"},
    "diet": {**DIETS, "veggie": "vegetarian"},
}


def read_correction(clause: Clause, head: Callable[[Clause], list[Finding]]) -> list[Finding]:
    """The corrected value of a ``<value>, not <old>`` clause, read by ``head``."""
    found = _CONTRAST.match(clause.text)
    if found is None:
        return []
    keep = _LEAD.sub("", found["keep"].strip()).strip(" ,:")
    old = found["old"].strip().lower()
    if not keep or NEGATION.search(keep):
        return []
    bare = _bare(keep, old)
    if bare:
        return bare
    read = head(Clause(keep, clause.cased, clause.tense, clause.greeting))
    return [
        f
        for f in read
        if f.attribute is not None
        and isinstance(f.value, str)
        and keep.lower().endswith(f.value.lower())
    ]


def _bare(keep: str, old: str) -> list[Finding]:
    words = keep.lower().removeprefix("i'm ").strip()
    for attribute, table in _BARE.items():
        if words in table and old in table and table[words] != table[old]:
            value = table[words]
            return [Finding(attribute, value, _TEXT[attribute].format(value))]
    return []


_TEXT = {"database": "User uses {}.", "diet": "User is {}."}


# "hindi isn't my first language, it's marathi": the denial names the slot, "it's" the value.
_DENIAL_THEN = re.compile(
    r"^(?P<denial>.*?(?:\bnot\b|n't\b).*?),?\s+(?:it's|it\s+is)\s+(?P<new>[^,;]{1,40}?)[\s.!]*$",
    _I,
)
_UNSAY = (
    (re.compile(r"\bisn't\b", _I), "is"),
    (re.compile(r"\baren't\b", _I), "are"),
    (re.compile(r"\b(?:do\s+not|don't)\s+", _I), ""),
    (re.compile(r"\bnot\s+", _I), ""),
)


def read_replacement(clause: Clause, head: Callable[[Clause], list[Finding]]) -> list[Finding]:
    """The value a ``<denial>, it's <new>`` clause puts in the denied one's place.

    The denial read affirmatively must name a slot and its old value; the same words
    with the new value in its place must read as the same slot with another value.
    """
    found = _DENIAL_THEN.match(clause.text)
    if found is None:
        return []
    affirmed = found["denial"]
    for pattern, replacement in _UNSAY:
        affirmed = pattern.sub(replacement, affirmed, count=1)
    if NEGATION.search(affirmed):
        return []
    old = [f for f in head(_like(clause, affirmed)) if isinstance(f.value, str)]
    if len(old) != 1 or old[0].attribute is None:
        return []
    where = (
        re.search(re.escape(old[0].value), affirmed, _I) if isinstance(old[0].value, str) else None
    )
    if where is None:
        return []
    swapped = affirmed[: where.start()] + found["new"].strip() + affirmed[where.end() :]
    new = [
        f
        for f in head(_like(clause, swapped))
        if f.attribute == old[0].attribute and f.value != old[0].value
    ]
    return new if len(new) == 1 else []


def _like(clause: Clause, text: str, *, cased: bool | None = None) -> Clause:
    return Clause(text, clause.cased if cased is None else cased, clause.tense, clause.greeting)
