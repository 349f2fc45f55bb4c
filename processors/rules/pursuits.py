"""What the speaker is doing these days, said in the present: free text no slot holds.

The free-text tail reads past events ("I visited Lisbon"); dialogue states as
much in the present progressive and in fandom: "I'm volunteering at the
animal rescue", "I'm taking a ceramics course", "I'm teaming up with a bakery",
"I'm a big fan of Nordic noir", "I'm all about thrillers", "I'm now part of
the choir". Each becomes one candidate with no attribute, worded about
"User". Only a closed set of verbs that name an ongoing pursuit is read
(never "I'm doing great", "I'm going to…"), only with an object that makes
sense without the conversation (no "it", "that", "you"), and never for a
plan ("I'm taking a course next month").

An allergy whose allergen the vocabulary does not know ("allergic to most
rodents") is kept the same way, as the speaker said it, rather than lost.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.tail import (
    FREE_TEXT,
    MAX_FREE_TEXT_WORDS,
    before_cut,
    dangling,
    plain,
)
from slotwise.processors.rules.wording import ADVERBS, third_person
from slotwise.processors.rules.words import EVENT_OBJECT_BLOCK, STOPWORDS, VAGUE

__all__ = ["read_pursuit"]

_I = re.IGNORECASE

_AM = rf"^I(?:'m|\s+am){ADVERBS}"
_DOING = re.compile(
    rf"{_AM}\s+(?P<verb>volunteering|learning|studying|training|teaching|coaching|mentoring|"
    r"working\s+(?:on|as|with|for)|teaming\s+up|building|writing|renovating|fostering|"
    r"saving\s+(?:up\s+)?for|organi[sz]ing|running(?=\s+(?:a|an|my|our|the)\b)|taking\s+part|"
    r"participating)\b(?P<rest>.*)$",
    _I,
)
_TAKING = re.compile(
    rf"{_AM}\s+(?:taking|doing|attending)\s+(?:a|an|some|my|this|the)\s+(?P<rest>[\w\s'-]*?"
    r"\b(?:class|classes|course|lessons?|program|programme|workshop|degree|apprenticeship|"
    r"internship|certification))\b",
    _I,
)
_FAN = re.compile(
    rf"{_AM}\s+(?:(?:a|an)\s+(?:(?:big|huge|total|massive|real|true|lifelong|longtime|"
    r"die-?hard|avid)\s+)*(?:fan\s+of\s+(?P<of>.+)|(?P<kind>[\w-]+)\s+fan\b.*)|"
    r"(?:(?:really|totally|so|super|very|big|huge)\s+)*into\s+(?P<into>.+)|"
    r"all\s+about\s+(?P<about>.+)|(?:crazy|passionate|obsessed)\s+(?:about|with)\s+(?P<with>.+))$",
    _I,
)
_MEMBER = re.compile(
    rf"{_AM}\s+(?:a\s+)?(?:part|member)\s+of\s+(?P<rest>.+)$|{_AM}\s+a\s+volunteer\s+(?P<at>"
    r"(?:at|with|for)\s+.+)$",
    _I,
)
_ALLERGIC = re.compile(
    rf"{_AM}\s+(?:very\s+|severely\s+|mildly\s+)?allergic\s+to\s+(?P<rest>.+)$", _I
)
# A pursuit that starts later is a plan; one with a day named is an appointment.
_LATER = re.compile(
    r"\b(?:tomorrow|tonight|later|next|soon|upcoming|on\s+\w+day|this\s+(?:weekend|evening|"
    r"afternoon))\b",
    _I,
)
_CUT = re.compile(
    r",|\s+(?:which|who|where|because|but|so|(?:too\s+)?and\s+(?:it|it's|that|they|love|like|"
    r"enjoy|want|hope))\s+",
    _I,
)
_TRAIL = re.compile(r"\s+(?:too|as\s+well|also|now|lately|these\s+days|right\s+now)$", _I)


def read_pursuit(clause: Clause) -> list[Finding]:
    """An ongoing pursuit, a fandom, a membership or an allergy outside the vocabulary,
    as one free-text finding; otherwise nothing."""
    if clause.tense == "future" or _LATER.search(clause.text):
        return []
    head = before_cut(clause.text, _CUT)
    if head is None:
        return []
    said = _TRAIL.sub("", head.strip())
    if len(said.split()) > MAX_FREE_TEXT_WORDS or dangling(said):
        return []
    if _readable(said):
        return [Finding(None, None, third_person(said), FREE_TEXT)]
    return []


def _readable(said: str) -> bool:
    doing = _DOING.match(said)
    if doing is not None:
        rest = doing["rest"].strip()
        first = rest.split(maxsplit=1)[0].lower() if rest else ""
        return bool(rest) and first not in EVENT_OBJECT_BLOCK and plain(rest, limit=12)
    taking = _TAKING.match(said)
    if taking is not None:
        return plain(taking["rest"], limit=10)
    fan = _FAN.match(said)
    if fan is not None:
        what = next(
            g for g in (fan["of"], fan["kind"], fan["into"], fan["about"], fan["with"]) if g
        )
        return plain(what, limit=8)
    member = _MEMBER.match(said)
    if member is not None:
        return plain(member["rest"] or member["at"], limit=8)
    allergic = _ALLERGIC.match(said)
    # "allergic to everything" names no allergen.
    return (
        allergic is not None and plain(allergic["rest"], limit=8) and not _vague(allergic["rest"])
    )


def _vague(text: str) -> bool:
    return all(w in VAGUE or w in STOPWORDS for w in re.findall(r"[\w'-]+", text.lower()))
