"""When a fact read from a clause began, and whether the state it names still holds.

The clause's own date wins; a state that "has lasted 3 years" began that long
before it was said; an undated event in the past began at the unknown start
unless the clause calls it recent; anything else began when it was said. A
schematized state that began before it was said and is told in a lasting tense
("I've been…", "since…") is *ongoing*: a later turn's account of it may
supersede a fact that began after it.
"""

from __future__ import annotations

import re
from datetime import datetime

from slotwise.processors.dates import UNKNOWN_START, DateMention, duration_start
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding
from slotwise.topics.records import Observation

__all__ = ["began", "still_holds"]

# "I just started chess", "recently joined a club": the event is recent, so it starts when
# it was said rather than at the unknown start.
_RECENT = re.compile(r"\b(?:just|recently|lately|newly)\b", re.IGNORECASE)


def began(
    finding: Finding, clause: Clause, mention: DateMention | None, observation: Observation
) -> datetime:
    """When the fact began: the date the clause gives; for a state that has lasted "for
    3 years", that long before it was said; for an undated event in the past, unknown
    (:data:`~processors.dates.UNKNOWN_START`); otherwise the moment it was said."""
    if mention is not None:
        return mention.when
    lasted = duration_start(clause.text, observation.observed_at)
    if lasted is not None:
        return lasted
    if finding.attribute is None and clause.tense == "past" and not _RECENT.search(clause.text):
        return UNKNOWN_START
    return observation.observed_at


# The tense says the state still holds: it has lasted ("I've been…", "since…", "for 3
# years") or it began with a recent move ("moved to Denver three weeks ago")…
_LASTING = re.compile(
    r"^I(?:'ve|\s+have)\s+(?:\w+\s+)?been\b|^been\b|\bsince\b|\bfor\s+(?:the\s+(?:last|past)\s+)?"
    r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+|a\s+few|several)\s+"
    r"(?:days?|weeks?|months?|years?|decades?)\b|^I\s+(?:just\s+)?(?:moved|relocated)\b.*\bago\b",
    re.IGNORECASE,
)
# …unless the clause also says it ended or came before something else.
_ENDED = re.compile(
    r"\b(?:was|were|used\s+to|until|till|before|previously|formerly|back\s+then|anymore|"
    r"no\s+longer)\b",
    re.IGNORECASE,
)


def still_holds(
    finding: Finding, clause: Clause, valid_from: datetime, observation: Observation
) -> bool:
    """A schematized state that began before it was said and holds now (see
    ``CandidateFact.ongoing``)."""
    return (
        finding.attribute is not None
        and UNKNOWN_START < valid_from < observation.observed_at
        and bool(_LASTING.search(clause.text))
        and not _ENDED.search(clause.text)
    )
