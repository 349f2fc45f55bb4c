"""Where the speaker works now, however the change is told: "first day at Stripe",
"these days I'm at Revolut", "since march i'm at wise", "I'm with Deloitte now, the old
job was killing me", "went freelance".

Being at a place is not working there: "I'm at Starbucks now, grabbing a coffee", "at
the gym", "at peace". A name is taken only where it stands for now (a capital and "now",
or, typed in lower case, a date it has held since), never for an errand,
a meal or a stay, and "with" a company only where work is talked about (not a bank, a
network or a friend).
"""

from __future__ import annotations

import re

from slotwise.processors.rules import gazetteer
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.head.spoken import own_or_bare
from slotwise.processors.rules.values import proper_noun, strip_the
from slotwise.processors.rules.words import STOPWORDS

__all__ = ["read_new_job"]

_I = re.IGNORECASE

_ORG = r"(?P<rest>.+)$"
# "since march", "since last month": how long the speaker has been where they are.
_SINCE = r"since\s+(?:last\s+|this\s+|early\s+|late\s+)?[a-z]+"
_NEW_JOB = tuple(
    re.compile(p, _I)
    for p in (
        rf"\b(?:first|1st)\s+day\s+(?:at|with)\s+(?:the\s+new\s+(?:job|place)\s+at\s+)?{_ORG}",
        rf"\bday\s+(?:one|two|three|\d+)\s+(?:at|with)\s+(?:the\s+new\s+(?:job|place|gig)\s+at\s+)?{_ORG}",
        rf"^I(?:'m|\s+am)\s+(?:\w+\s+){{1,3}}into\s+(?:the|my)\s+(?:new\s+)?job\s+at\s+{_ORG}",
        rf"^I(?:'m|\s+am)\s+joining\s+{_ORG}",
        # "these days I'm at Revolut", "I'm with Deloitte now", "now working at Airbnb".
        rf"^(?:(?:so|yeah|and|but|anyway|now|these\s+days|nowadays|{_SINCE})\s*,?\s+)*(?:I(?:'m|\s+am)"
        rf"(?:\s+now)?\s+)?(?P<how>at|with|working\s+(?:at|for))\s+(?P<cased>{_ORG})",
        rf"^I(?:'ve|\s+have)\s+worked\s+(?:at|for)\s+{_ORG}",
        rf"^I(?:'ve|\s+have)\s+been\s+(?:at|with|working\s+at|working\s+for)\s+{_ORG}",
    )
)
_NEW_JOB_AFTER = re.compile(
    r"^\s*(?:$|[,;(]|(?:now|these\s+days|today|tomorrow|on|in|next|this|from|since|for|and|is|"
    r"was|starting|as)\b)",
    _I,
)
_SELF = re.compile(
    r"\b(?:going|gone|went)\s+(?:freelance|solo)|\bcontracting\s+for\s+myself\b|"
    r"^I(?:'m|\s+am)\s+(?:now\s+)?(?:self-employed|freelancing|freelance|a\s+freelancer)\b|"
    r"\bwent\s+solo\b|\bstarted\s+freelancing\b",
    _I,
)


# Being somewhere for an errand or a meal: "I'm at Starbucks now, grabbing a coffee".
_ERRAND = re.compile(
    r"\b(?:grabbing|getting\s+(?:a|some)|having\s+(?:a|some|lunch|dinner|breakfast|coffee|drinks)|"
    r"waiting|queu(?:e|ing)|picking\s+up|shopping|for\s+(?:a|an|the|lunch|coffee|dinner|drinks|"
    r"breakfast|meeting|interview|talk|gig|show|work|business)|meeting\s+(?:a|my|some)|visiting|"
    r"visit|staying|stay|hotel|conference)\b|\?",
    _I,
)
# What makes "with Deloitte" an employer, not a bank, a network or a friend.
_WORK_TALK = re.compile(
    r"\b(?:jobs?|work(?:ing)?|role|offer|hired|company|employer|gig|boss|colleagues|team)\b", _I
)


# Where people are without an article, and states said with "at": "at home", "at uni", "at
# peace". Typed in lower case these read like a company's name.
_BARE_AT = frozenset(
    "home work school uni college university church lunch dinner breakfast brunch practice "
    "training rehab hospital court camp class mass bed prison nursery daycare kindergarten gym "
    "yoga pilates choir football rugby cricket tennis swim swimming dance least last first peace "
    "ease risk sea war capacity odds loss heart fault sixes sevens it all".split()
)


def _at_work_now(clause: Clause, found: re.Match[str], org: str) -> bool:
    """ "I'm at the gym" is a place; a name that stands for now is a job: a capitalised one,
    or one typed in lower case where the clause dates it; "with" one
    only where work is talked about, and a bare "at Monzo" not at all (a visit, a meeting)."""
    text = clause.text
    how = found["how"].lower()
    work_talk = _WORK_TALK.search(text) is not None
    if (how == "with" and not work_talk) or (how != "working at" and _ERRAND.search(text)):
        return False
    speaker = re.match(r"^(?:[\w,]+\s+)*?I(?:'m|\s+am)\b", text, _I) is not None
    if how == "at" and not speaker:
        return False
    if clause.cased:
        return _NOW_SAID.search(text) is not None
    # In lower case only a name with no article ("at the library" is a place) that has held
    # for a while: "since march i'm at wise".
    lasting = re.search(rf"\b(?:{_SINCE}|these\s+days|nowadays)\b", text, _I)
    named = not re.match(r"(?:the|a|an|my|our|his|her|their)\b", found["rest"], _I)
    return speaker and how == "at" and named and org.casefold() not in _BARE_AT and bool(lasting)


_NOW_SAID = re.compile(r"\b(?:now|these\s+days|nowadays)\b", _I)


def read_new_job(clause: Clause) -> list[Finding]:
    """Where the speaker works from now on, however the change is told."""
    text = clause.text
    if _SELF.search(text) and own_or_bare(clause):
        return [Finding("employer", "self-employed", "User is self-employed.")]
    for number, pattern in enumerate(_NEW_JOB):
        found = pattern.search(text)
        if found is None:
            continue
        named = proper_noun(strip_the(found["rest"]), clause.cased, limit=4)
        if named is None or not _NEW_JOB_AFTER.match(named[1]):
            return []
        org = named[0]
        if org.lower() in STOPWORDS or gazetteer.city_by_name(org) or gazetteer.country(org):
            return []
        if number == 4 and not _at_work_now(clause, found, org):
            return []
        return [Finding("employer", org, f"User works at {org}.")]
    return []
