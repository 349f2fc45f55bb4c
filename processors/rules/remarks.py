"""A statement whose negation sits in a remark about something else.

"fully remote now, no more train", "moved to lisbon, never going back to london",
"vegan three months now and honestly don't miss cheese": the negation that would send
the clause to the rules for denials belongs to a remark after the statement,
and the statement itself is affirmed. The remark is dropped so the statement is read as
said; a remark that denies the statement itself ("i'm vegan, not really", "remote, not
anymore", "moved to bristol, no wait, bath") is kept, and the clause stays a denial.
"""

from __future__ import annotations

import re
from dataclasses import replace

from slotwise.processors.rules.clauses import NEGATION, Clause, clause_tense

__all__ = ["without_denying_remark"]

# "i live in manchester now, not leeds": the value the statement is contrasted with.
_DENIAL_ASIDE = re.compile(
    r",\s*(?:and\s+|but\s+)?"
    r"(?P<remark>not\s+(?:in\s+|at\s+|on\s+|the\s+)?[\w'-]+(?:\s+[\w'-]+)?)\s*$",
    re.IGNORECASE,
)
# "moved to porto and still can't find decent bread": a run-on whose denial is a remark
# joined after the statement, about something else.
_DENIED_REMARK = re.compile(
    r"(?:,\s*|\s+)(?:and|but|though|yet)\s+(?P<remark>(?:[\w']+\s+){0,3}?(?:not|never|no|nobody|"
    r"nothing|cannot|\w+n't)\b.*)$",
    re.IGNORECASE,
)
# "fully remote now, no more train", "I work at Spotify now, no complaints": a remark
# after a comma, or run on after "now" or a "lol", that opens on its negation.
_AFTERTHOUGHT = re.compile(
    r"(?:,\s*|(?<=\bnow)\s+|\s+(?:lol|haha|lmao)\s+)(?:(?:and|but|honestly|still|tbh|just|lol|haha)\s+)*(?P<remark>(?:no|never|nothing|"
    r"nobody|none|not|\w+n't)\b.*)$",
    re.IGNORECASE,
)
# A remark that takes the statement back: the fact is over, not quite so, or corrected.
_TAKES_BACK = re.compile(
    r"^(?:no\s*[,.!]|nope|nah|(?:not|no|never)\s*\W*$|"
    r"(?:not|no|never)\s+(?:(?:really|exactly|quite|strictly|technically|officially|fully|"
    r"entirely|completely|totally|100|yet|again|any\s*more|longer|wait|sorry|actually|"
    r"i\s+mean|scratch|kidding|jk|was|were|am|is|true|so\s+sure|sure)\b|more\W*$))|"
    r"\b(?:any\s*more|no\s+longer|used\s+to|not\s+now|not\s+yet|never\s+again)\b",
    re.IGNORECASE,
)


# "no more though", "not really lol": what closes a remark says nothing of its own.
_SIGN_OFF = re.compile(
    r"(?:\s+(?:though|tho|lol|lmao|haha|tbh|honestly|sadly|now|either|\W+))+$", re.IGNORECASE
)


def without_denying_remark(clause: Clause) -> Clause | None:
    """The clause with the remark its negation belongs to dropped, when the statement left
    denies nothing and the remark does not take it back; else None."""
    for kept in _statements_left(clause.text):
        if kept and kept != clause.text and not NEGATION.search(kept):
            return replace(clause, text=kept, tense=clause_tense(kept))
    return None


def _statements_left(text: str) -> list[str]:
    return [
        text[: remark.start()].strip()
        for aside in (_DENIAL_ASIDE, _DENIED_REMARK, _AFTERTHOUGHT)
        if (remark := aside.search(text))
        and not _TAKES_BACK.search(_SIGN_OFF.sub("", remark["remark"]))
    ]
