"""A clause read again without the relative date it gives.

People date a change as they tell it: "got promoted to tech lead three weeks ago", "we've
lived in valencia since october", "since the reorg in feb i'm on the search team",
"been fully remote since the summer". The value readers expect the slot's words to open
or close the clause, and the date phrase stands in the way, so they read nothing. When a
clause reads no slot, it is read once more with its date phrase cut out; a slot read that
way is added to what the clause read as it stands (an event told with its date, "adopted a
kitten last week", stays). The candidate is still dated from the clause as it was said.

Only a date in the past or the present is cut: a change dated ahead ("next month",
"tomorrow") is not true yet, and reading it here would make it one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding

__all__ = ["read_undated"]

_I = re.IGNORECASE

_COUNT = (
    r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d+|"
    r"a\s+couple(?:\s+of)?|a\s+few|few|several)"
)
_UNIT = r"(?:days?|weeks?|months?|years?|fortnights?)"
_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)"
)
_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_SEASON = r"(?:spring|summer|fall|autumn|winter|new\s+year|christmas|easter|holidays)"
# A period named by the calendar, after "since", "as of", "in", "over"…
_WHEN = rf"(?:{_MONTH}|{_DAY}|{_SEASON}|(?:19|20)\d\d|the\s+(?:{_SEASON}|new\s+year))"
# A work or life event a change is dated by: "since the reorg", "since the move".
_EVENT = (
    r"(?:reorg|re-org|restructure|restructuring|merger|acquisition|layoffs|move|wedding|"
    r"divorce|baby|promotion|lockdown|pandemic|break-?up)"
)
# A date that can only be in the past or the present: "three weeks ago", "since october",
# "as of last week", "since the reorg in feb", "last month", "yesterday".
_SETTLED = re.compile(
    "|".join(
        (
            rf"\b{_COUNT}\s+{_UNIT}\s+(?:ago|back)\b",
            rf"\b(?:ever\s+)?since\s+(?:(?:the\s+)?(?:start|end|beginning)\s+of\s+)?(?:the\s+)?"
            rf"(?:last\s+|this\s+|past\s+)?(?:{_WHEN}|week|month|year|weekend)\b",
            rf"\b(?:as\s+of|in|on|at|over|during)\s+(?:the\s+)?(?:last|past)\s+"
            rf"(?:{_WHEN}|week|month|year|weekend)\b",
            rf"\b(?:last|this\s+past|past)\s+(?:{_DAY}|{_SEASON}|week|month|year|weekend|night)\b",
            # "since moving", "since we moved to LA": the move is the date, its place kept
            # out of the clause's value.
            r"\b(?:ever\s+)?since\s+(?:moving|relocating|(?:i|we)\s+(?:moved|relocated)|the\s+move)"
            r"(?:\s+(?:to|here|there|over|back)\b[^,;.!?]*)?",
            rf"\b(?:since|after)\s+(?:the|my|our)\s+{_EVENT}\b(?:\s+in\s+{_WHEN})?",
            r"\b(?:yesterday|earlier\s+today|this\s+(?:morning|afternoon))\b",
        )
    ),
    _I,
)
# A date by the calendar alone ("in march", "on monday", "at new year"): past only when the
# clause is told in the past tense ("moved to portland in march"), else it may be a plan.
_CALENDAR = re.compile(rf"\b(?:in|on|at|over|during)\s+(?:the\s+)?{_WHEN}\b", _I)


def undated(text: str, past: bool) -> str | None:
    """``text`` without its date phrases of the past (calendar ones only when ``past``),
    or None when it has none."""
    cut = _SETTLED.sub(" ", text)
    if past:
        cut = _CALENDAR.sub(" ", cut)
    if cut == text:
        return None
    cut = re.sub(r"\s*,\s*(?=,|$)", "", re.sub(r"\s{2,}", " ", cut)).strip(" ,;")
    return cut or None


def read_undated(read: Callable[[Clause], list[Finding]], clause: Clause) -> list[Finding]:
    """What ``read`` finds in the clause; when it reads no slot, with the slots it reads in
    the clause with its date phrases cut out, if any."""
    found = read(clause)
    if any(f.attribute is not None for f in found):
        return found
    cut = undated(clause.text, past=clause.tense == "past")
    if cut is None:
        return found
    # The event as told, with its date, stays beside the slot it names.
    return found + [f for f in read(replace(clause, text=cut)) if f.attribute is not None]
