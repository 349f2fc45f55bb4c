"""The free-text tail: what a clause says when no head rule places it.

A first-person past event ("I visited Lisbon in March") or a stated
favourite becomes one candidate with no attribute, for the vector and model
path; anything that needs the conversation to make sense is left out.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.wording import ADVERBS, third_person
from slotwise.processors.rules.words import (
    CONTEXT_WORDS,
    EVENT_OBJECT_BLOCK,
    GOT_OBJECTS,
    IRREGULAR_PAST,
    NOT_EVENTS,
    PARTICIPLES,
    STATE_PROGRESSIVES,
    STOPWORDS,
    TIME_WORDS,
)

__all__ = [
    "FREE_TEXT",
    "MAX_FREE_TEXT_WORDS",
    "before_cut",
    "dangling",
    "plain",
    "read_free_text",
]

_I = re.IGNORECASE

FREE_TEXT = 0.7
MAX_FREE_TEXT_WORDS = 20

_EVENT = re.compile(rf"^I(?P<aux>'ve|\s+have)?{ADVERBS}\s+(?P<verb>[a-z]+)\b(?P<rest>.*)$")
_FAVOURITE = re.compile(
    r"^my\s+(?:all-time\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|are)\s+(?P<rest>.+)$",
    _I,
)
_TAIL_CUT = re.compile(r",|\s+(?:which|who|where)\s+", re.IGNORECASE)
# "working on for a while": a preposition left without its object (a relative clause's remnant).
_DANGLING = re.compile(
    r"\b(?:on|at|in|with|to|for|about|from|of)\s+(?:on|at|in|with|to|for|about|from|of)\b|"
    r"\b(?:on|at|in|with|to|for|about|from|of)$|"
    # "signed up for a pottery class and, as I said, …": the cut left a dangling conjunction.
    r"\b(?:and|or|but|so|because|then|like|as|than|that)$",
    re.IGNORECASE,
)
# "I ran my first 10k and wow, was I tired": the cut at the comma leaves an exclamation.
_INTERJECTED = re.compile(
    r"\s+(?:and|but|so)\s+(?:wow|whoa|oh|omg|boy|man|gosh|yeah|yes|well|honestly|seriously)"
    # …or before the time phrase moved after it ("… and wow last night").
    r"(?=$|\s+(?:last|yesterday|today|tonight|this|recently|earlier|on|in|a|\d+)\b)",
    re.IGNORECASE,
)
# "I lost my job": an event with nothing but "my job" after the verb, and still news.
_JOB_END = re.compile(rf"^I{ADVERBS}\s+(?:lost|left|quit)\s+my\s+job\b", re.IGNORECASE)
_HAD_OBJECTS = re.compile(r"^\s+(?:surgery|an?\s+(?:\w+\s+)?(?:baby|surgery|operation|accident))\b")


def read_free_text(clause: Clause) -> list[Finding]:
    """A first-person past event no rule places, or a stated favourite; otherwise nothing."""
    favourite = _FAVOURITE.match(clause.text)
    if favourite is not None:
        if plain(favourite["rest"], limit=8):
            return [Finding(None, None, third_person(clause.text), FREE_TEXT)]
        return []
    head = before_cut(clause.text, _TAIL_CUT)
    if head is None:
        return []
    event = _INTERJECTED.sub("", head)
    found = _EVENT.match(event)
    if found is None or not _event_verb(found["aux"], found["verb"], found["rest"]):
        return []
    if len(event.split()) > MAX_FREE_TEXT_WORDS or dangling(found["rest"]):
        return []
    content = found["rest"].split(maxsplit=1)[-1] if found["verb"] == "been" else found["rest"]
    if not plain(content, limit=None) and not _JOB_END.match(event):
        return []
    return [Finding(None, None, third_person(event), FREE_TEXT)]


def _event_verb(aux: str | None, verb: str, rest: str) -> bool:
    words = rest.lower().split()
    following = words[0] if words else ""
    if verb in NOT_EVENTS and verb != "had":
        return False
    if following in EVENT_OBJECT_BLOCK:
        return False
    if verb == "had":
        return bool(_HAD_OBJECTS.match(rest))
    if verb == "got":
        return not aux and following in GOT_OBJECTS  # "I've got" is possession
    if aux:
        if verb == "been":
            # "I've been getting into jazz": a new interest, not a state like "feeling".
            taken_up = following == "getting" and words[1:2] == ["into"]
            progressive = following.endswith("ing") and (
                following not in STATE_PROGRESSIVES or taken_up
            )
            return following == "to" or (progressive and words[1:2] != ["hard"])
        return verb in PARTICIPLES or (verb.endswith("ed") and len(verb) > 4)
    return verb in IRREGULAR_PAST or (verb.endswith("ed") and len(verb) > 4)


# What a comma can be followed by inside one phrase: "…, as well as …".
_ALONG = re.compile(r"^\s*(?:as\s+well\s+as|along\s+with|plus|not\s+to\s+mention)\b", _I)
# "Pepper, Biscuit and a rabbit", "sanding, priming, and painting": items, then "and".
_LIST_REST = re.compile(r"^\s*(?P<items>[\w'-]+(?:\s+[\w'-]+){0,2}?)\s*,?\s+(?:and|or|&)\s+\S", _I)
# "a calm, welcoming space": the comma sits between a determiner's adjectives.
_DETERMINED = re.compile(r"\b(?:a|an|the|my|our|their|his|her|your|such\s+a)\s+[\w-]+$", _I)
_NEXT_TWO = re.compile(r"^\s*(?P<first>[\w'-]+)\s+(?P<second>[\w'-]+)")
# Words that open a clause of their own after a comma, or are no item of a list.
_OPENERS = frozenset(
    "i we he she they it you that this there these those and but so or then because which who "
    "where when while though although if a an the my our his her their your its me him them us "
    "not no yes just also now still too really lol haha omg".split()
)
_FINITE = frozenset(
    "is are was were am be been has have had did do does can could will would".split()
)
_PREPOSITIONS = frozenset("at in on to for of with from by about into onto over".split())


def before_cut(text: str, cut: re.Pattern[str]) -> str | None:
    """``text`` up to its first ``cut``, or None when a comma there falls inside a list or
    a phrase: the part before it would state the first item as the whole."""
    found = cut.search(text)
    if found is None:
        return text
    head, rest = text[: found.start()], text[found.end() :]
    if found.group().strip() == "," and _continues(head, rest):
        return None
    return head


def _continues(head: str, rest: str) -> bool:
    if _ALONG.match(rest):
        return True
    listed = _LIST_REST.match(rest)
    if listed is not None:
        items = [w.lower().split("'")[0] for w in listed["items"].split()]
        if items[0] not in _OPENERS and not any(
            w in _FINITE or (w.endswith("ed") and len(w) > 4) for w in items
        ):
            return True
    two = _NEXT_TWO.match(rest)
    if two is None or not _DETERMINED.search(head):
        return False
    first, second = (two[n].lower().split("'")[0] for n in ("first", "second"))
    return first not in _OPENERS and second not in _OPENERS | _PREPOSITIONS


def dangling(text: str) -> bool:
    """The text ends on a preposition or a conjunction that lost what followed it."""
    return bool(_DANGLING.search(text))


# "one month ago", "a few weeks back": a date, not a pronoun ("one") to resolve.
_AGO = re.compile(
    r"\b(?:a|an|one|two|three|four|five|six|a\s+few|a\s+couple\s+of|several|\d+)\s+"
    r"(?:days?|weeks?|months?|years?)\s+(?:ago|back)\b",
    re.IGNORECASE,
)
# An acronym in capitals ("my HR job", "the US") is no pronoun.
_ACRONYM = re.compile(r"\b[A-Z]{2,}\b")


def plain(text: str, limit: int | None) -> bool:
    """Self-contained: no pronoun that needs the conversation to resolve, some content."""
    bare = _ACRONYM.sub("ACRONYM", _AGO.sub("", TIME_WORDS.sub("", text)))
    words = re.findall(r"[\w'-]+", bare.lower())
    if limit is not None and len(words) > limit:
        return False
    if any(w in CONTEXT_WORDS or w.removesuffix("'s") in CONTEXT_WORDS for w in words):
        return False
    return any(len(w) >= 3 and w not in STOPWORDS for w in words)
