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
from dataclasses import replace

from slotwise.processors.rules.clauses import NEGATION, Clause
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.words import DATABASES, DIETS

__all__ = ["read_correction", "read_meant", "read_replacement"]

_I = re.IGNORECASE
_CONTRAST = re.compile(r"^(?P<keep>.+?),?\s+not\s+(?P<old>[\w' .+#@-]{1,40}?)[\W_]*$", _I)
_LEAD = re.compile(
    r"^(?:(?:small\s+|quick\s+)?correction\s*:?\s*|(?:sorry|oops|wait|no|nope|ugh|ah|typo|"
    r"my\s+bad|hold\s+on|actually|autocorrect)\b[\s,!:.\u2014-]*|\*\s*|I\s+meant\s+|it's\s+|"
    r"it\s+is\s+|(?:it\s+)?should\s+be\s+)+",
    _I,
)
# Words after the value that say it is a correction, not part of it: "porto actually".
_AFTER = re.compile(r"(?:\s+(?:actually|obviously|lol|sorry|oops)|\s*[*!]+)+$", _I)
# "not vegetarian, vegan": the denied word first; read as "vegan, not vegetarian".
_DENIED_FIRST = re.compile(
    r"^(?:(?:sorry|oops|wait|no|nope|ugh|ah|typo|my\s+bad|actually|autocorrect)\b[\s,!:.]*)*"
    r"not\s+(?P<old>[\w' .+#-]{1,40}?)\s*(?:,|\s[\u2013\u2014-])\s*(?P<keep>[^,]{1,60}?)[\s.!]*$",
    _I,
)
# The closed vocabularies a bare value is read from, as the labelled data spells them.
_BARE: dict[str, dict[str, str]] = {
    "database": DATABASES,
    "diet": {**DIETS, "veggie": "vegetarian"},
}


def read_correction(clause: Clause, head: Callable[[Clause], list[Finding]]) -> list[Finding]:
    """The corrected value of a ``<value>, not <old>`` clause, read by ``head``."""
    first = _DENIED_FIRST.match(clause.text)
    found = _CONTRAST.match(
        f"{first['keep']}, not {first['old']}" if first is not None else clause.text
    )
    if found is None:
        return read_meant(clause)
    keep = _AFTER.sub("", _LEAD.sub("", found["keep"].strip()).strip(" ,:"))
    old = found["old"].strip().lower()
    if not keep or NEGATION.search(keep):
        return []
    bare = _bare(keep, old)
    if bare:
        return bare
    read = head(Clause(keep, clause.cased, clause.tense, clause.greeting))
    return [
        replace(f, corrected=True)
        for f in read
        if f.attribute is not None
        and isinstance(f.value, str)
        and keep.lower().endswith(f.value.lower())
        and f.value.casefold() != old
    ]


# "it's sam.lee@gmail.com, not sam.le@gmail.com": an address put right by another.
_AN_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")


def _bare(keep: str, old: str) -> list[Finding]:
    words = keep.lower().removeprefix("i'm ").strip()
    if _AN_EMAIL.match(words) and _AN_EMAIL.match(old.strip(" .")):
        return [Finding("email", words, f"User's email is {words}.", corrected=True)]
    for attribute, table in _BARE.items():
        if words in table and old in table and table[words] != table[old]:
            value = table[words]
            return [Finding(attribute, value, _TEXT[attribute].format(value), corrected=True)]
    return []


_TEXT = {"database": "User uses {}.", "diet": "User is {}."}


# "wait no i meant vegan", "scratch that, make it monthly", "typo, it's hybrid": a
# correction that names only the new value. The value must be the whole rest of the clause
# and a word of exactly one single-valued slot's closed vocabulary: a list (languages, and
# health above all) corrected that way is left to a human, who sees which value it replaces.
_MEANT = re.compile(
    r"^(?:(?:wait|no|nope|sorry|oops|ugh|ah|oh|my\s+bad|scratch\s+that|strike\s+that|typo|"
    r"correction|autocorrect)\b[\s,:!.-]*)*(?:I\s+meant|I\s+mean|make\s+(?:that|it)|it's|it\s+is|"
    r"it\s+should\s+(?:be|say))\s+(?P<value>[\w+#' -]{1,30}?)"
    r"(?:\s+(?:actually|sorry|lol|then|instead|obviously))*[\s.!]*$",
    _I,
)
# The lead must say it is a correction: "it's monthly" alone is a plain statement.
_CORRECTING = re.compile(
    r"\b(?:wait|no|nope|sorry|oops|my\s+bad|scratch\s+that|strike\s+that|typo|correction|"
    r"autocorrect|I\s+meant|I\s+mean|make\s+(?:that|it))\b",
    _I,
)
# The single-valued closed slots a bare corrected value is read into, and their names.
_MEANT_SLOTS = {
    "diet": "diet",
    "database": "database",
    "programming_languages": "programming language",
    "billing_cycle": "billing cycle",
    "work_arrangement": "work arrangement",
    "preferred_contact_method": "preferred contact method",
}


def read_meant(clause: Clause) -> list[Finding]:
    """The one closed-vocabulary value a correction without the old value puts in."""
    # The classifier's vocabularies; it reads through the head rules, which include this one.
    from slotwise.processors.rules.classifier import value_mentions  # noqa: PLC0415

    found = _MEANT.match(clause.text)
    if found is None or not _CORRECTING.search(clause.text[: found.start("value")]):
        return []
    value = found["value"].strip()
    named = [
        (attribute, mentions[0][2])
        for attribute in _MEANT_SLOTS
        if len(mentions := value_mentions(attribute, value)) == 1
        and (mentions[0][0], mentions[0][1]) == (0, len(value))
    ]
    if len(named) != 1:
        return []
    attribute, canonical = named[0]
    text = f"User corrected their {_MEANT_SLOTS[attribute]}: {canonical}."
    return [Finding(attribute, canonical, text, corrected=True)]


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
    return [replace(new[0], corrected=True)] if len(new) == 1 else []


def _like(clause: Clause, text: str, *, cased: bool | None = None) -> Clause:
    return Clause(text, clause.cased if cased is None else cased, clause.tense, clause.greeting)
