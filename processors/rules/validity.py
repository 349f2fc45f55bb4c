"""When a fact read from a clause began, and whether the state it names still holds.

The clause's own date wins; a state that "has lasted 3 years" began that long
before it was said; an undated event in the past began at the unknown start
unless the clause calls it recent; anything else began when it was said. A
schematized state that began before it was said and is told in a lasting tense
("I've been…", "since…") is *ongoing*: a later turn's account of it may
supersede a fact that began after it. A state dated weeks ahead ("starting at stripe
next month") is *not yet* true: it gives no value, only a question when it sets a change.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from slotwise.processors.dates import UNKNOWN_START, DateMention, duration_start
from slotwise.processors.model import stable_id
from slotwise.processors.rules.asking import question
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding
from slotwise.topics.records import CandidateFact, Observation

__all__ = ["began", "not_yet", "planned", "still_holds"]

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


# How far ahead a dated change still counts as under way: "first day at northwind is
# tomorrow" is a job already changed.
_UNDER_WAY = timedelta(days=2)


# The turn says the old state is already over ("my last day at shopify was friday, joining
# stripe next month"): what comes next is a change under way, however far ahead it starts.
_OVER_ALREADY = re.compile(
    r"\b(?:last\s+(?:day|shift)|left|quit|resigned|handed\s+in|served\s+my\s+notice|"
    r"moved\s+out|lease\s+is\s+signed|signed\s+the\s+lease)\b",
    re.IGNORECASE,
)


def not_yet(mention: DateMention | None, observation: Observation) -> bool:
    """Whether the clause dates its state to a week, a month or a year ahead ("starting at
    stripe next month", "as of next week I'm full remote", "from april"): a plan that may
    yet fall through, not true now, so it must not supersede what still holds. A move
    booked for a day ("on saturday", "on the 1st") is a change under way and is kept, and
    so is one the turn says the old state already ended for."""
    return (
        mention is not None
        and mention.granularity != "day"
        and mention.when > observation.observed_at + _UNDER_WAY
        and not _OVER_ALREADY.search(observation.text)
    )


# A change set for later: "going hybrid from june", "starting at stripe next month", "as of
# next week I'm full remote" (not "a hybrid event next week").
_PLANNED = re.compile(
    r"\b(?:going|gonna|switching|moving|starting|joining|becoming|changing|turning|as\s+of|"
    r"from|will|'ll)\b",
    re.IGNORECASE,
)


def planned(observation: Observation, attribute: str, said: str, n: int) -> list[CandidateFact]:
    """A question about ``attribute`` for a clause that sets a change for weeks ahead ("going
    hybrid from june"): no value yet, but a human hears of it; nothing for a clause that
    names an event then ("a hybrid event next week")."""
    if not _PLANNED.search(said):
        return []
    asked = question(observation, attribute, said, n)
    return [asked.model_copy(update={"candidate_id": stable_id("rules-ahead", asked.candidate_id)})]
