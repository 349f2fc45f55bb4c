"""How people type: chat shorthand read as the sentence it stands for.

Two steps before the rules read a clause, both conservative:

* :func:`expand` — shorthand whose reading is not in doubt ("im" → "I'm",
  "w/" → "with", "rn" → "right now", "dont" → "don't"); a lone "i" is "I";
* :func:`restore_subject` — chat drops the "I": a clause that opens on a verb or
  a state ("work at zalando", "married w 2 kids", "hybrid now") is the speaker's
  own statement, so it is read as "I work at zalando", "I'm married with 2 kids".
  A clause that opens on anyone else ("my brother lives in Cairo", "the new hire
  is remote", a name) is left alone: the rules then find nothing in it.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.values import job_title

__all__ = ["expand", "restore_subject"]

_I = re.IGNORECASE

_SHORTHAND: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, flags), replacement)
    for pattern, replacement, flags in (
        (r"\bi'?m\b", "I'm", _I),
        (r"\bi'?ve\b", "I've", _I),
        (r"\bi'll\b", "I'll", _I),
        (r"\bi\b", "I", 0),
        (r"\bw/", "with", _I),
        (r"(?<=\w)\s+w\s+(?=\w)", " with ", 0),
        (r"(?<=\w)\s+n\s+(?=\w)", " and ", 0),
        (r"\brn\b", "right now", 0),
        (r"\bbc\b", "because", 0),
        (r"\bb/c\b", "because", 0),
        (r"\bpls\b|\bplz\b", "please", 0),
        (r"\bu\b", "you", 0),
        (r"\bur\b", "your", 0),
        (r"\bdont\b", "don't", _I),
        (r"\bdoesnt\b", "doesn't", _I),
        (r"\bcant\b", "can't", _I),
        (r"\bwont\b", "won't", _I),
        (r"\bisnt\b", "isn't", _I),
        (r"\bdidnt\b", "didn't", _I),
        (r"\bthats\b", "that's", _I),
        (r"\bits\b(?=\s+(?:a|an|the|my|our|just|all|now|been|not|only|mostly|fine)\b)", "it's", 0),
        (r"\blil\b", "little", 0),
        (r"\bbf\b", "boyfriend", 0),
        (r"\bgf\b", "girlfriend", 0),
        (r"\bwfh\b", "working from home", _I),
        (r"\bveggie\b", "vegetarian", _I),
        (r"\bfyi\b|\bngl\b|\blowkey\b", "", _I),
        # "name's Diego": chat drops the "my" before a name said at a turn's or a line's start.
        (r"(?:^|(?<=[.!,]\s))name(?:'s|\s+is)\b", "my name is", _I),
        # Idioms that deny or wish nothing the sentence states ("…, no big deal", "…, wish me
        # luck"): read as a denial or a wish, they would hide the statement.
        (r"[,;]?\s*\b(?:no\s+(?:big\s+deal|worries|joke|cap|kidding)|wish\s+me\s+luck)\b", "", _I),
        (r"\blol\b|\blmao\b|\bhaha+\b|\bugh+\b|\bomg\b", "", _I),
        (r"!{2,}", "!", 0),
        # "vegetarian 🌱": a pictograph decorates a statement, it is no word of it (an arrow or
        # a plane, "berlin ➡️ lisbon ✈️", may be one, and stays).
        (r"\s*[\U0001F300-\U0001FAFF](?:[\uFE0F\u200D]|[\U0001F300-\U0001FAFF])*", "", 0),
    )
)


def expand(text: str) -> str:
    """``text`` with unambiguous chat shorthand written out."""
    for pattern, replacement in _SHORTHAND:
        text = pattern.sub(replacement, text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


# A clause that opens on one of these verbs has dropped its "I".
_VERBS = (
    r"work|worked|working|live|lived|living|moved|relocated|speak|take|start|started|starting|"
    r"began|joined|"
    r"joining|quit|left|lost|switched|swapped|got|have|adopted|rescued|studied|study|graduated|"
    r"grew|teach|run|use|write|code|program|program|pay|paid|paying|go|do|knit|bake|play|"
    r"follow|eat|went|became|turned|upgraded|downgraded|cancelled|canceled|signed|handed|"
    r"resigned|retrained|finished|picked|took|cut|gave|made|landed|arrived|unpacked|promoted"
)
# …and one that opens on one of these states has dropped its "I'm".
_STATES = (
    r"on|based|living|married|single|engaged|divorced|separated|widowed|vegan|vegetarian|"
    r"pescatarian|keto|allergic|hybrid|remote|fully|in|from|at|originally|currently|still|"
    r"now|a|an|the\s+(?=\w+\s+(?:at|for)\b)|new\s+to|back|self-employed|freelance|freelancing|"
    r"lactose|gluten|coeliac|celiac|diabetic|asthmatic|type\s+[12]|native\s+\w+\s+speaker"
)
_RESTORE_I = re.compile(
    rf"^(?:(?:just|finally|recently|also|still|now|currently)\s+)*(?:{_VERBS})\b", _I
)
_RESTORE_AM = re.compile(
    rf"^(?:(?:just|finally|recently|also|still|now|currently)\s+)*(?:{_STATES})\b", _I
)
# "Contracting can pay well…", "Vegan food is great": the opening word is the subject
# of its own verb, a topic the speaker talks about, not a state of theirs with the "I" dropped.
_TOPIC = re.compile(
    r"^[\w-]+(?:\s+(?!(?:which|that|who|now|too|again|still|also)\b)[\w-]+)?\s+(?:is|are|was|were|can|could|has|have|had|makes?|made|seems?|"
    r"sounds?|looks?|will|would|should|must|might|gives?|helps?|tastes?|feels?)\b(?!\s+(?:to|been)\b)",
    _I,
)
# Openings that name a statement's subject, or are no statement.
_HAS_SUBJECT = re.compile(
    r"^(?:I|I'm|I've|I'll|I'd|me|my|mine|we|we're|we've|our|you|your|he|she|they|it|it's|this|"
    r"that|there|here|what|who|how|why|when|where|which|is|are|do|does|can|could|would|should)\b",
    _I,
)


# "took ages", "gave me goosebumps": chat dropped "it", not "I". The speaker is the
# clause's object, or its object is the time or effort something took.
_IT_DROPPED = re.compile(
    r"^(?:(?:just|finally|really|also|still)\s+)*(?:[a-z]+\s+(?:me|myself)\b|took\s+(?:(?:some|"
    r"a|an|so|too|much|lots?|bit|few|couple|little|of|long|while|good|real|whole|\d+)\s+)*(?:ages|"
    r"forever|time|while|work|effort|patience|practice|courage|guts|trial|convincing|energy|"
    r"years?|months?|weeks?|days?|hours?|minutes?)\b)",
    _I,
)
_TITLE_AT = re.compile(r"^(?P<title>[A-Za-z][\w/&-]*(?:\s+[\w/&-]+){0,3}?)\s+at\s+\S", _I)
# "born in valparaíso", "diagnosed with asthma": chat drops "I was" before a birth or a
# diagnosis.
_BORN = re.compile(r"^(?:born\s+(?:and\s+raised\s+)?in|diagnosed\s+with)\b", _I)
# "been hybrid since march": chat drops "I've" before a lasting state.
_RESTORE_HAVE = re.compile(r"^(?:(?:just|also|still|finally)\s+)*(?:been|gone)\b", _I)


_WHERE_GERUND = re.compile(
    r"^(?:(?:just|finally|recently|also|still|now|currently)\s+)*(?:working\s+(?:at|for|as|"
    r"remotely|from\s+home)|living\s+(?:in|with|at|alone))\b",
    _I,
)


def restore_subject(clause: str) -> str:
    """The clause with the speaker put back where chat dropped them."""
    if not clause or _HAS_SUBJECT.match(clause):
        return clause
    if _RESTORE_HAVE.match(clause):
        return f"I've {clause[0].lower()}{clause[1:]}"
    if _BORN.match(clause):
        return f"I was {clause[0].lower()}{clause[1:]}"
    titled = _TITLE_AT.match(clause)
    if titled is not None and job_title(titled["title"]) is not None:
        # "product designer at figma": a bio line, the speaker's own job.
        return f"I'm a {clause[0].lower()}{clause[1:]}"
    if _TOPIC.match(clause) or _IT_DROPPED.match(clause):
        return clause
    verb = _RESTORE_I.match(clause)
    if verb is not None:
        if clause[:2] == "I ":
            return clause
        # "working at deloitte" dropped "I'm", "work at deloitte" dropped "I"; "working on
        # cars must be rewarding" is a topic, read as nobody's.
        subject = "I'm" if _WHERE_GERUND.match(clause) else "I"
        return f"{subject} {clause[0].lower()}{clause[1:]}"
    if _RESTORE_AM.match(clause):
        return f"I'm {clause[0].lower()}{clause[1:]}"
    return clause
