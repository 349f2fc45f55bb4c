"""A move or a job change told through what follows from it, not the change itself.

People rarely say "I live in Glasgow now"; they say "new landlord in glasgow is a
nightmare", "the commute from our place in Leith is brutal", "moved into a tiny flat in
valencia", "moro em são paulo"; and for a job, "my new manager at stripe is great",
"first week at monzo done", "trabajo en telefónica". Each names something only a
resident (a landlord, neighbours, a commute from home) or an employee (a manager,
teammates, a first week) has, and the place or the organisation it belongs to.

A house bought is no home yet (the move may be months off); one rented is. The guards
keep a consequence from being a guess: the place must be one the gazetteer knows, the
organisation must not be a place or a common noun ("my new team at work"), and a clause
about someone else, a former one ("my old landlord in leeds"), a wish, a plan or a
question reads as nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from slotwise.processors.rules import gazetteer
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.values import BOUNDARY, proper_noun, strip_the
from slotwise.processors.rules.words import COMMON_WORD_PLACES, STOPWORDS

__all__ = ["read_home_by_consequence", "read_job_by_consequence"]

_I = re.IGNORECASE

# Someone else's landlord, manager or first week: "my sister's new flat in Oslo", "her
# new team at Arm".
_SOMEONE = re.compile(
    r"\b(?:he|she|they|his|her|their|him|them|you|your)\b|"
    r"\b(?!(?:it|that|what|there|here|who|where)'s\b)\w+'s\b|"
    r"\bmy\s+(?:\w+\s+)?(?:brother|sister|mum|mom|mother|dad|father|parents?|husband|wife|"
    r"partner|boyfriend|girlfriend|fianc\w*|son|daughter|kids?|children|friends?|cousin|aunt|"
    r"uncle|colleague|coworker|boss|manager|client)\b",
    _I,
)

# What only someone who lives there has: a landlord, neighbours, a commute *from* it (a
# commute *to* somewhere is the office's town), or a home moved into or rented.
_DWELLING = r"(?:place|flat|house|apartment|apt|studio|condo|home|room)"
_HOME_BY = tuple(
    re.compile(p, _I)
    for p in (
        r"(?:\b(?:my|our)\s+|^(?:the\s+)?)(?:new\s+)?(?:landlord|landlady|neighbou?rs?|"
        r"neighbou?rhood|street|building|flatmates?|roommates?|housemates?)\s+(?:here\s+)?in\s+"
        r"(?P<rest>.+)$",
        r"(?:\b(?:my|our)\s+|^(?:the\s+)?)(?:new\s+|daily\s+)?commute\s+from\s+(?:(?:my|our)\s+(?:new\s+)?"
        rf"{_DWELLING}\s+in\s+)?(?P<rest>.+)$",
        rf"\bmoved\s+into\s+(?:a|an|my|our|the|this)\s+(?:\w+\s+)?{_DWELLING}\s+in\s+(?P<rest>.+)$",
        r"\b(?:renting|rent)\s+(?:a|an|my|our)\s+(?:new\s+|first\s+|little\s+)?"
        rf"{_DWELLING}\s+in\s+(?P<rest>.+)$",
        # "the new place in porto still smells like paint", "first month in our Warsaw flat".
        rf"\b(?:the|my|our)\s+new\s+{_DWELLING}\s+in\s+(?P<rest>.+)$",
        rf"\b(?:in|into|from)\s+(?:my|our)\s+(?:new\s+)?(?P<rest>\w+(?:\s+\w+)?\s+{_DWELLING})\b",
        # Portuguese and Spanish "I live in": "moro em são paulo", "vivimos en rosario".
        r"^(?:eu\s+|nós\s+)?mor(?:o|amos)\s+em\s+(?P<rest>.+)$",
        r"^(?:nosotros\s+)?vivimos\s+en\s+(?P<rest>.+)$",
    )
)
# A dwelling that is not the speaker's home now, or a clause that is no statement.
_NOT_HOME = re.compile(
    r"\?|\b(?:old|former|previous|ex|holiday|vacation|summer|airbnb|rental\s+property|if|would|"
    r"might|maybe|want|wanna|hope|hoping|looking|thinking|considering|plan(?:s|ning)?|dream\w*|"
    r"someday|investment|for\s+(?:my|our|the)\s+(?:mum|mom|dad|parents|son|daughter|kids?|"
    r"sister|brother)|parents'?|(?:mum|mom|dad|sister|brother|daughter|son|kid|friend|partner|"
    r"wife|husband|boyfriend|girlfriend|cousin|aunt|uncle|grandma|grandpa)s?'s?)\b",
    _I,
)
# After the place: the verb of the clause it is the subject of ("… in glasgow is awful").
_THEN_VERB = re.compile(
    r"^\s*(?:is|are|was|were|has|have|keeps?|kept|feels?|seems?|sucks?|rocks?|takes?|charges?|"
    r"agora|ahora|hoy|desde|há|hace|starts?|started|done|over|finished|complete|survived|"
    r"went|going|so\s+far|and|still|finally|already|really|honestly|just|actually|totally|"
    # a new subject ("since joining klarna I've…") or what the neighbours did ("brought cake")
    r"I|I've|I'm|im|we|we've|we're|brought|made|gave|came|threw|baked|invited|helped|said|"
    rf"{_DWELLING})\b",
    _I,
)


def read_home_by_consequence(clause: Clause) -> list[Finding]:
    for found in _matches(_HOME_BY, clause, _NOT_HOME):
        named = _named(found["rest"], clause.cased, limit=3)
        if named is None:
            continue
        named = re.sub(rf"\s+{_DWELLING}$", "", named, flags=_I)
        if not clause.cased and named.casefold() in COMMON_WORD_PLACES:
            continue
        # A landlord's or a commute's town: the context is strong enough for a city known
        # under another name too ("aarhus" for Århus), kept as the speaker wrote it.
        town = gazetteer.city_by_name(named)
        if town is not None or gazetteer.city(named) is not None:
            where = town.name if town is not None else named
            return [Finding("home_city", where, f"User lives in {where}.")]
        country = gazetteer.country(named)
        if country is not None:
            return [Finding("home_country", country, f"User lives in {country}.")]
    return []


def _matches(
    patterns: tuple[re.Pattern[str], ...], clause: Clause, denied: re.Pattern[str]
) -> Iterator[re.Match[str]]:
    """Each pattern's match in a clause that states something of the speaker's own."""
    if denied.search(clause.text):
        return
    for pattern in patterns:
        found = pattern.search(clause.text)
        if found is not None and not _SOMEONE.search(clause.text[: found.start()]):
            yield found


def _named(rest: str, cased: bool, limit: int) -> str | None:
    """The name at the start of ``rest``: as capitalised when the turn is cased; in a
    lower-case turn the fewest words a boundary follows ("accenture already booked …")."""
    rest = strip_the(rest)
    for size in (limit,) if cased else range(1, limit + 1):
        named = proper_noun(rest, cased, limit=size)
        if named is None:
            return None
        if BOUNDARY.match(named[1]) or _THEN_VERB.match(named[1]):
            return named[0]
    return None


# What only an employee has: a new manager or team there, a first week there; and the
# Spanish and Portuguese "I work at".
_JOB_BY = tuple(
    re.compile(p, _I)
    for p in (
        r"\b(?:my|our)\s+new\s+(?:manager|boss|line\s+manager|lead|team|teammates|colleagues|"
        r"co-?workers|job|role|position|gig|employer|workplace)\s+(?:at|with|over\s+at)\s+"
        r"(?P<rest>.+)$",
        r"\b(?:first|1st|second|2nd)\s+(?:full\s+)?(?:week|month|fortnight|sprint|shift)\s+"
        r"(?:at|with)\s+(?:the\s+new\s+(?:job|place|gig)\s+at\s+)?(?P<rest>.+)$",
        r"^(?:yo\s+|eu\s+)?(?:trabajo|trabalho)\s+(?:en|em|para|pra)\s+(?P<rest>.+)$",
        # "onboarding at deliveroo is tomorrow 9am": the first days of the new job.
        r"(?:^|\bmy\s+)onboarding\s+(?:at|with)\s+(?P<rest>.+)$",
        # "two weeks into the new job at canva", "week one at deloitte done", "since joining
        # klarna": the new job counted from its start.
        r"^(?:(?:I'm|im|I\s+am)\s+)?(?:(?:a|one|two|three|four|five|six|\d+|a\s+few|few)\s+"
        r"(?:days?|weeks?|months?)\s+into\s+)?(?:the\s+)?new\s+(?:job|role|position|gig)\s+"
        r"(?:at|with|over\s+at)\s+(?P<rest>.+)$",
        r"\b(?:week|month|day)\s+(?:one|1|two|2)\s+(?:at|with)\s+(?P<rest>.+)$",
        r"^(?:ever\s+)?since\s+(?:i\s+)?join(?:ing|ed)\s+(?P<rest>.+)$",
    )
)
_NOT_JOB = re.compile(
    r"\?|\b(?:old|former|previous|ex|if|would|might|maybe|want|wanna|hope|hoping|interview\w*|"
    r"offer|applied|applying|thinking|considering)\b",
    _I,
)
# Where a first week is not at an employer.
_NOT_EMPLOYER = frozenset(
    "uni university school college gym camp church practice clinic course class bootcamp "
    "rehab physio therapy daycare nursery kindergarten remoto remote casa home distancia".split()
)


def read_job_by_consequence(clause: Clause) -> list[Finding]:
    for found in _matches(_JOB_BY, clause, _NOT_JOB):
        org = _named(found["rest"], clause.cased, limit=4)
        if org is None:
            continue
        lowered = org.lower()
        if (
            lowered in STOPWORDS
            or lowered.split()[0] in _NOT_EMPLOYER
            or gazetteer.city_by_name(org)
            or gazetteer.country(org)
        ):
            continue
        return [Finding("employer", org, f"User works at {org}.")]
    return []
