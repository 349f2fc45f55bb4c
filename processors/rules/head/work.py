"""Rules for work and the user's product: employer, job title, team, education, plan, database."""

from __future__ import annotations

import re
from dataclasses import replace

from slotwise.processors.rules import gazetteer
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import DIRECT, INFERRED, Finding
from slotwise.processors.rules.head.matching import AM, compile_all, first_match, say
from slotwise.processors.rules.values import (
    BOUNDARY,
    job_title,
    organisation,
    proper_noun,
    strip_the,
)
from slotwise.processors.rules.wording import ADVERBS
from slotwise.processors.rules.words import (
    DATABASES,
    INSTITUTION,
    LEADERS,
    NOT_PLANS,
    PLANS,
    SOCIAL,
    STOPWORDS,
)

__all__ = [
    "read_database",
    "read_education",
    "read_employer",
    "read_plan",
    "read_team",
    "read_title",
]

_I = re.IGNORECASE

_AFTER_ORG_TITLE = re.compile(
    r"^\s+as\s+(?:a|an|the|our|their)\s+(?P<title>[\w\s/&-]+?)"
    r"(?=\s+(?:on|in|at|since|starting|from|for|last|next|this|today|tomorrow)\b|$)",
    _I,
)

# "I've been a deputy head since september": a lasting state is the job now.
_LASTING = rf"(?:{AM}|I(?:'ve|\s+have){ADVERBS}\s+been)"
_SINCE = r"(?:\s+(?:since|for)\s+(?:(?:about|almost|over|nearly)\s+)?(?:\w+\s+)?\w+(?:\s+now)?)?"
# "a nurse for 12 years" is how long, not whom for.
_FOR = (
    r"for(?!\s+(?:(?:about|almost|over|nearly|the\s+(?:last|past))\s+)?(?:\d+|a|an|one|two|three|"
    r"four|five|six|seven|eight|nine|ten|twelve|twenty|several|many|few|years|months|ages)\b)"
)
_TITLE_AT = re.compile(
    rf"^{_LASTING}\s+(?:a|an|the)\s+(?P<title>[\w\s/&-]+?)\s+(?P<prep>at|{_FOR}|with|of)\s+"
    r"(?P<rest>.+)$",
    _I,
)
_TITLE_ONLY = re.compile(
    rf"^(?:{_LASTING}|I\s+went\s+back\s+to\s+being|I\s+(?:[\w'-]+\s+){{0,3}}?(?:and\s+)?(?:retrained|"
    r"requalified)\s+as)\s+(?:a|an)\s+(?P<title>[\w\s/&-]+?)"
    r"(?:\s+by\s+(?:trade|profession|training))?(?:\s+(?:now|these\s+days|again|full[- ]time))?"
    rf"{_SINCE}(?P<tail>\s*,.*)?$",
    _I,
)
# "I'm a PM now, no more coding": a remark after a title said to hold now leaves it standing;
# one that doubts or dates it ("a nurse, or was until March") does not.
_NOW = re.compile(r"\b(?:now|these\s+days|nowadays)\b", _I)
_DOUBTING = re.compile(
    r"\b(?:if|would|might|maybe|until|till|or|not|no\s+longer|any\s*more|but|was|used)\b|\?", _I
)
_WORK_AS = re.compile(
    rf"^I{ADVERBS}\s+work\s+as\s+(?:a|an)\s+(?P<title>[\w\s/&-]+?)"
    r"(?:\s+(?:at|for)\s+(?P<rest>.+))?$",
    _I,
)
_EMPLOYED = compile_all(
    rf"^I{ADVERBS}\s+work\s+(?:full-time\s+|part-time\s+)?(?:at|for)\s+(?P<rest>.+)$",
    rf"^{AM}\s+(?:working|employed)\s+(?:full-time\s+|part-time\s+)?(?:at|for|by)\s+(?P<rest>.+)$",
)
# A change of job: the fact is where the user works from then on, so the text says that.
_HIRED = compile_all(
    rf"^I(?:'ll|\s+will|'m|\s+am)?{ADVERBS}\s+(?:be\s+)?(?:start|starting|started|begin|beginning|"
    r"began)\s+(?:work\s+|working\s+|a\s+new\s+job\s+|my\s+new\s+job\s+)?(?:at|with)\s+(?P<rest>.+)$",
    # Chat drops the "I": "accepted the offer at Atlassian", "got hired by Arup".
    rf"^(?:I(?:'ve|\s+have)?{ADVERBS}\s+)?(?:got\s+(?:a\s+(?:new\s+)?job|hired)\s+(?:at|with|by)|"
    r"was\s+hired\s+(?:at|by)|landed\s+a\s+(?:new\s+)?job\s+(?:at|with)|(?:accepted|took)\s+"
    r"(?:a|an|the)\s+(?:new\s+)?(?:job|offer|position|role)\s+(?:at|from|with))\s+(?P<rest>.+)$",
)
_JOINED = compile_all(
    rf"^I(?:'ve|\s+have)?{ADVERBS}\s+joined\s+(?P<rest>.+)$",
    # A dated start at a company: "I join Optus on the 3rd", "I'm joining Arm in May".
    rf"^I(?:'ll|\s+will|'m|\s+am)?{ADVERBS}\s+(?:join|joining)\s+(?P<rest>[^,;]+?\s+(?:on|in|next|"
    r"from|this)\b.*)$",
)
_NEW_JOB_AS = re.compile(
    rf"^I(?:'ve|\s+have)?{ADVERBS}\s+(?:(?:started|got|landed|took|accepted|began)\s+(?:a|my)\s+"
    r"(?:new\s+)?(?:job|role|position)|(?:started|began)(?:\s+work(?:ing)?)?)\s+as\s+"
    r"(?:a\s+|an\s+)?(?P<title>[\w\s/&-]+?)"
    r"(?:\s+(?:at|with)\s+(?P<rest>.+?))?(?P<after>(?:\s+(?:last|this|in|on|since|two|a)\b.*)?)$",
    _I,
)


def _org_and_title(rest: str, cased: bool) -> tuple[str, str | None] | None:
    found = proper_noun(strip_the(rest), cased)
    if found is None:
        return None
    org, after = found
    as_title = _AFTER_ORG_TITLE.match(after)
    title = None if as_title is None else job_title(as_title["title"])
    if as_title is not None:
        after = after[as_title.end() :]
    return (org, title) if BOUNDARY.match(after) else None


def _employment(org: str | None, title: str | None, text: str, confidence: float) -> list[Finding]:
    found = [] if org is None else [Finding("employer", org, text, confidence)]
    return found + ([] if title is None else [Finding("job_title", title, text, confidence)])


def _works(org: str | None, title: str | None) -> str:
    """The canonical sentence for a job change ("I start at Stripe on Monday")."""
    role = "" if title is None else f" as {'an' if title[0] in 'aeiouAEIOU' else 'a'} {title}"
    return f"User works at {org}{role}." if org else f"User works{role}."


# "I'm a nurse in auckland": the job, and the place the speaker works it in, their home.
_TITLE_IN = re.compile(
    rf"^{AM}\s+(?:a|an)\s+(?P<title>[\w\s/&-]+?)\s+(?:in|based\s+in|out\s+of)\s+(?P<rest>.+)$", _I
)


def _title_in_place(clause: Clause) -> list[Finding]:
    found = _TITLE_IN.match(clause.text)
    title = None if found is None else job_title(found["title"])
    if found is None or title is None:
        return []
    named = proper_noun(strip_the(found["rest"]), clause.cased, limit=3)
    if named is None or not BOUNDARY.match(named[1]):
        return []
    town, country = gazetteer.city_by_name(named[0]), gazetteer.country(named[0])
    if town is not None:
        where = Finding("home_city", town.name, f"User lives in {town.name}.")
    elif country is not None:
        where = Finding("home_country", country, f"User lives in {country}.")
    else:
        return []  # "a nurse in the ICU", "a teacher in a primary school"
    return [Finding("job_title", title, say(clause, named[0])), where]


def read_employer(clause: Clause) -> list[Finding]:
    placed = _title_in_place(clause)
    if placed:
        return placed
    found = _TITLE_AT.match(clause.text)
    if found is not None:
        title = job_title(found["title"])
        leader = title is not None and bool(LEADERS & set(title.lower().split()))
        if title is None or (found["prep"].lower() == "of" and not leader):
            return []
        org = organisation(found["rest"], clause.cased)
        if org is None and not re.match(r"^(?:a|an|the|my|our|one)\s", found["rest"], _I):
            return []  # "an engineer at heart"
        if title == "student":
            return [] if org is None else [Finding("education", org, say(clause, org))]
        return _employment(org, title, say(clause, *([org] if org else [])), DIRECT)
    new_job = _NEW_JOB_AS.match(clause.text)
    found = _WORK_AS.match(clause.text) or new_job or _TITLE_ONLY.match(clause.text)
    if found is not None:
        if found.groupdict().get("tail"):
            said = clause.text[: found.start("tail")]
            if not _NOW.search(said) or _DOUBTING.search(found["tail"]):
                return []
            clause = replace(clause, text=said)
        title = job_title(found["title"])
        rest = found.groupdict().get("rest")
        org = None if rest is None else organisation(rest, clause.cased)
        if title is None or (rest is not None and org is None):
            return []
        text = _works(org, title) if new_job else say(clause, *([org] if org else []))
        return _employment(org, title, text, DIRECT)
    found = first_match(_EMPLOYED, clause.text)
    if found is not None:
        parsed = _org_and_title(found["rest"], clause.cased)
        return [] if parsed is None else _employment(*parsed, say(clause, parsed[0]), DIRECT)
    found = first_match(_HIRED, clause.text)
    confidence = DIRECT
    if found is None:
        found = first_match(_JOINED, clause.text)
        confidence = INFERRED  # "I joined Strava" is a sign-up, not a job
    parsed = None if found is None else _org_and_title(found["rest"], clause.cased)
    if parsed is None or parsed[0].lower() in SOCIAL:
        return []
    org, title = parsed
    return _employment(org, title, _works(org, title), DIRECT if title else confidence)


_TEAM = re.compile(
    rf"^(?:I(?:'m|\s+am|{ADVERBS}\s+work){ADVERBS}\s+(?:on|in|with|part\s+of)|"
    # "they moved me to the payments team", "got moved onto the design systems team".
    r"(?:(?:they|we|I)\s+)?(?:\w+\s+)?(?:moved|put|transferred|switched)\s+(?:me\s+)?"
    r"(?:to|onto|into)|I\s+(?:got\s+|was\s+)?(?:moved|put|transferred)\s+(?:to|onto|into)|"
    rf"I(?:'ve|\s+have)?{ADVERBS}\s+joined)\s+the\s+"
    r"(?P<team>[\w&/-]+(?:\s+[\w&/-]+){0,2}?)\s+team(?P<after>.*)$",
    _I,
)


# "my title is senior data scientist now", "I'm the head of design now": the title itself.
_TITLE_IS = re.compile(
    r"^my\s+(?:job\s+|official\s+|new\s+)?title\s+is\s+(?:now\s+)?(?P<title>[\w\s/&-]+?)"
    r"(?:\s+(?:now|these\s+days|officially))?\W*$",
    _I,
)
_LEADING = re.compile(
    r"^(?P<title>(?:head|director|vp)\s+of\s+(?!(?:the|my|our|a|an)\b)[a-z]+"
    r"(?:\s+(?!(?:now|these)\b)[a-z]+)?)$",
    _I,
)


def _leading(raw: str) -> str | None:
    """ "head of product": a title that leads a function and names no job word."""
    found = _LEADING.match(raw.strip())
    return None if found is None else " ".join(found["title"].lower().split())


_THE_LEADER = re.compile(
    rf"^{AM}\s+(?:now\s+)?the\s+(?P<title>(?:head|director|vp)\s+of\s+(?!(?:the|my|our|a|an)\b)"
    r"[a-z]+(?:\s+(?!(?:now|these)\b)[a-z]+)?)(?:\s+(?:now|these\s+days))?\W*$",
    _I,
)


# "got promoted to senior developer last week", "they made me team lead": the new title,
# whatever the tail says.
_PROMOTED = re.compile(
    rf"^(?:I(?:'ve|\s+have)?{ADVERBS}\s+(?:(?:got|was|been|just\s+got)\s+)?promoted\s+to|"
    r"(?:they|we|the\s+(?:company|board|firm)|my\s+(?:boss|manager))\s+(?:(?:just|finally|"
    r"officially)\s+)?made\s+me)\s+(?:(?:a|an|the)\s+)?(?P<title>[\w\s/&-]+?)"
    r"(?=\s+(?:last|this|in|on|at|since|yesterday|today|so|and|after|recently)\b|\W*$)",
    _I,
)


def read_title(clause: Clause) -> list[Finding]:
    """A job title stated as the title, with no employer."""
    found = _TITLE_IS.match(clause.text) or _PROMOTED.match(clause.text)
    title = None if found is None else job_title(found["title"]) or _leading(found["title"])
    if title is None:
        leader = _THE_LEADER.match(clause.text)
        title = None if leader is None else " ".join(leader["title"].lower().split())
    return [] if title is None else [Finding("job_title", title, f"User's job title is {title}.")]


def read_team(clause: Clause) -> list[Finding]:
    found = _TEAM.match(clause.text)
    if found is None or set(found["team"].lower().split()) & STOPWORDS:
        return []
    team = " ".join(w if w.isupper() else w.lower() for w in found["team"].split())
    at = re.match(r"^\s+(?:at|for)\s+(?P<rest>.+)$", found["after"], _I)
    org = None if at is None else organisation(at["rest"], clause.cased)
    if (at is None and not BOUNDARY.match(found["after"])) or (at is not None and org is None):
        return []
    text = say(clause, *([org] if org else []))
    return [Finding("team", team, text), *_employment(org, None, text, DIRECT)]


_EDUCATION = compile_all(
    rf"^I{ADVERBS}\s+(?:studied|study|majored|major)(?:\s+[a-z][\w\s-]{{0,40}}?)?\s+at\s+"
    r"(?P<rest>.+)$",
    rf"^{AM}\s+(?:studying|majoring)(?:\s+[a-z][\w\s-]{{0,40}}?)?\s+at\s+(?P<rest>.+)$",
    rf"^I(?:'ve|\s+have)?{ADVERBS}\s+graduated\s+from\s+(?P<rest>.+)$",
    rf"^I{ADVERBS}\s+(?P<institution>go\s+to|attend|attended|went\s+to)\s+(?P<rest>.+)$",
)


def read_education(clause: Clause) -> list[Finding]:
    found = first_match(_EDUCATION, clause.text)
    school = None if found is None else organisation(found["rest"], clause.cased)
    if found is None or school is None:
        return []
    if found.groupdict().get("institution") and not INSTITUTION.search(school):
        return []  # "I went to Paris" is a trip
    return [Finding("education", school, say(clause, school))]


_PLAN_LEAD = compile_all(
    rf"^(?:I|we)(?:'m|'re|\s+am|\s+are|'ve\s+been|\s+have\s+been){ADVERBS}\s+on\s+"
    r"(?:the\s+|a\s+|an\s+|our\s+|my\s+)?"
    r"(?P<rest>.+)$",
    # "upgraded to the team plan on friday": chat drops the "I".
    rf"^(?:(?:I|we)(?:'ve|\s+have)?{ADVERBS}\s+|(?:just|finally|recently)\s+)?"
    r"(?:upgraded|downgraded|switched|moved|changed|bumped\s+up|"
    r"(?:went|gone|stepped|moved)\s+(?:up|down)|"
    r"subscribed|signed\s+up)(?:\s+(?:my|our)\s+(?:plan|account|subscription|workspace))?\s+"
    r"(?:to|for)\s+(?:the\s+|a\s+|an\s+)?(?P<rest>.+)$",
    r"^(?:my|our)\s+(?:current\s+)?(?:plan|subscription|tier)\s+is\s+(?:now\s+)?(?:the\s+|a\s+)?"
    r"(?P<rest>.+)$",
)
_PLAN_NAMES = compile_all(
    r"^(?P<name>[\w+-]+(?:\s+[\w+-]+)?)\s+(?P<kind>plan|tier|subscription|package|edition)\b"
    r"(?P<after>.*)$",
    r"^(?P<name>[\w+-]+)(?P<kind>)(?P<after>(?:\s.*)?)$",
)


# A bio line that opens on the plan's name: "team plan, 8 seats", "pro tier now".
_PLAN_ALONE = re.compile(r"^(?:the\s+)?(?P<name>\w+)\s+(?:plan|tier)(?:\s+now)?\s*(?:$|,)", _I)
# Plan names that are also everyday noun phrases: "business plan, due friday" is a document.
_PLAN_PHRASES = frozenset({"business", "growth", "personal", "standard", "starter", "developer"})


def read_plan(clause: Clause) -> list[Finding]:
    alone = _PLAN_ALONE.match(clause.text)
    if alone is not None:
        word = alone["name"].lower()
        if word not in PLANS or word in _PLAN_PHRASES:
            return []
        plan = word.capitalize()
        return [Finding("plan", plan, f"User is on the {plan} plan.")]
    found = first_match(_PLAN_LEAD, clause.text)
    name = None if found is None else first_match(_PLAN_NAMES, found["rest"].strip())
    if name is None:
        return []
    words = name["name"].split()
    known = all(w.lower() in PLANS for w in words)
    named = bool(name["kind"]) and all(w[0].isupper() or w.lower() in PLANS for w in words)
    if set(w.lower() for w in words) & NOT_PLANS or not (known or named):
        return []
    if not BOUNDARY.match(name["after"]):
        return []
    plan = " ".join(w if w[0].isupper() else w.capitalize() for w in words)
    return [Finding("plan", plan, f"User is on the {plan} plan.")]


_DB_IS = compile_all(
    r"^(?:our|my|the)\s+(?:(?:main|primary|production|prod|core|current|new)\s+)*"
    r"(?:database|db|datastore|data\s+store)\s+is\s+(?:now\s+)?(?P<rest>.+)$",
    # "main db for me is snowflake now": the owner comes after.
    r"^(?:(?:main|primary|production|prod|core|current|new)\s+)+(?:database|db|datastore)\s+"
    r"for\s+(?:me|us)\s+is\s+(?:now\s+)?(?P<rest>.+)$",
)
_DB_SWITCH = compile_all(
    rf"^(?:I|we)(?:'ve|\s+have)?{ADVERBS}\s+(?:switched|migrated|moved|changed)"
    r"(?:\s+(?:our|my|the))?(?:\s+(?:main|primary|production|prod))?(?P<db>\s+(?:database|db|data))?"
    r"(?:\s+from\s+\S+(?:\s+\S+)?)?\s+(?:to|onto|over\s+to)\s+(?P<rest>.+)$"
)
_DB_USE = compile_all(
    # "we use mongodb instead of postgres": the one in use, the one dropped named after; "we're
    # on postgres": a use names a database only the table knows.
    rf"^(?:I|we)(?:'re|'m|\s+are|\s+am)?{ADVERBS}\s+(?:use|using|run|running|rely\s+on)\s+"
    r"(?P<rest>.+?)(?:\s+instead\s+of\s+.+)?$",
    rf"^(?:I|we)(?:'re|'m|\s+are|\s+am){ADVERBS}\s+on\s+(?P<rest>.+?)(?:\s+instead\s+of\s+.+)?$",
)
_DB_USE_AFTER = re.compile(
    r"^\s*(?:$|(?:as\s+(?:our|my|the)\s+(?:main\s+|primary\s+)?(?:database|db)|in\s+production|"
    r"for\s+(?:everything|our\s+(?:main\s+)?(?:database|data|db)|storage|persistence)|now|"
    r"these\s+days)\b)",
    _I,
)


def read_database(clause: Clause) -> list[Finding]:
    found = first_match(_DB_IS, clause.text)
    named_slot = found is not None
    if found is None:
        found = first_match(_DB_SWITCH, clause.text)
        named_slot = found is not None and found["db"] is not None
    use = found is None
    if use:
        found = first_match(_DB_USE, clause.text)
    parsed = None if found is None else proper_noun(found["rest"], clause.cased, limit=3)
    if parsed is None:
        return []
    name, after = parsed
    database = DATABASES.get(name.lower())
    if database is None and not named_slot:
        return []
    if not (_DB_USE_AFTER if use else BOUNDARY).match(after):
        return []
    value = database or name
    return [Finding("database", value, f"User's main database is {value}.")]
