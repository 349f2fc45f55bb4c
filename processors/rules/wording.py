"""A fact's text: the clause reworded about "User", with relative dates made absolute.

A relative date ("yesterday") in a stored fact would go stale, so it is
replaced by the date it meant when the turn was observed.
"""

from __future__ import annotations

import re
from datetime import datetime

from slotwise.processors.dates import Tense, absolute_phrase, find_date
from slotwise.processors.rules.words import UNINFLECTED

__all__ = ["ADVERBS", "absolute_dates", "third_person"]

ADVERBS = (
    r"(?:\s+(?:also|now|currently|still|actually|just|recently|finally|already|mostly|mainly|"
    r"primarily|officially|really|happily|newly|even|basically|definitely|proudly|first|once))*"
)
_HEAD = re.compile(
    rf"^[Ii](?P<aux>'m|\s+am|'ve|\s+have|'ll|\s+will|\s+was|\s+can)?(?P<adv>{ADVERBS})"
    rf"(?:\s+(?P<verb>[A-Za-z'-]+))?",
)
_PRONOUNS = (
    (r"\bI'm\b", "they're"),
    (r"\bI am\b", "they are"),
    (r"\bI've\b", "they've"),
    (r"\bI was\b", "they were"),
    (r"\b[Ii]\b", "they"),
    (r"\bmyself\b", "themselves"),
    (r"\b[Mm]y\b", "their"),
    (r"\bmine\b", "theirs"),
    (r"\bme\b", "them"),
    (r"\bour\b", "their"),
    (r"\bours\b", "theirs"),
)
_AUX = {"'m": "is", "am": "is", "'ve": "has", "have": "has", "'ll": "will", "will": "will"}


def third_person(clause: str) -> str:
    """``clause`` (which starts with "I" or "My") as a sentence about "User"."""
    if re.match(r"^my\b", clause, re.IGNORECASE):
        return _sentence("User's" + _rest_pronouns(clause[2:]))
    head = _HEAD.match(clause)
    if head is None:
        return _sentence(clause)
    aux = (head.group("aux") or "").strip()
    verb = head.group("verb") or ""
    if aux:
        words = ["User", _AUX.get(aux, aux) + head.group("adv"), verb]
    else:
        words = ["User" + head.group("adv"), _conjugate(verb)]
    return _sentence(" ".join(w for w in words if w) + _rest_pronouns(clause[head.end() :]))


def _conjugate(verb: str) -> str:
    lower = verb.lower()
    if lower in UNINFLECTED or lower.endswith("ed") or "'" in lower:
        return {"don't": "doesn't"}.get(lower, verb)
    if lower in ("have", "do", "go"):
        return {"have": "has", "do": "does", "go": "goes"}[lower]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def _rest_pronouns(text: str) -> str:
    for pattern, replacement in _PRONOUNS:
        text = re.sub(pattern, replacement, text)
    return text


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip(" .,;:-\u2013\u2014")
    return text + "."


_PREPOSITION_BEFORE = re.compile(
    r"\b(?:since|from|until|by|in|on|for|during|before|after)\s+$", re.IGNORECASE
)
_HEDGE = re.compile(
    r"\b(?:about|around|roughly|almost|nearly|over|approximately|just\s+under)\s+$", re.IGNORECASE
)


def absolute_dates(text: str, observed_at: datetime, tense: Tense | None) -> str:
    mention = find_date(text, observed_at, tense=tense)
    if mention is None or not mention.deictic:
        return text
    phrase = absolute_phrase(mention)
    before = text[: mention.start]
    after = text[mention.end :]
    hedge = _HEDGE.search(before)
    if after.startswith("'s"):  # "yesterday's class" → "the March 13, 2026 class"
        phrase, after = "the " + phrase.split(" ", 1)[1], after[2:]
    elif hedge is not None:
        before, phrase = before[: hedge.start()], "around " + phrase.split(" ", 1)[1]
    elif _PREPOSITION_BEFORE.search(before):
        phrase = phrase.split(" ", 1)[1]
    return f"{before}{phrase}{after}"
