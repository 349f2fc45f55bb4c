"""What the speaker says they are in passing: "as a vegan, is honey ok??", "could you use
she/her for me?".

An aside that opens a sentence ("as a pescatarian can i eat caesar salad?", "as
a type 1 diabetic, is this cake going to wreck me?", "as a lifelong vegetarian
this soup recipe slaps") states the speaker's diet, condition, nationality or
job even when the rest of the sentence is a question, which the clause splitter
drops. Only the aside is read, only at a sentence's start (so "my wife, as a
vegan, …" is not the speaker's), and only a value a closed vocabulary knows.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.findings import INFERRED, Finding
from slotwise.processors.rules.values import job_title
from slotwise.processors.rules.words import CONDITIONS, DEMONYMS, DIETS

__all__ = ["read_asides"]

_I = re.IGNORECASE

_ASIDE = re.compile(
    r"(?:^|[.!?;]\s+)(?:(?:so|and|but|well|ok|okay|honestly|also|speaking)\s+)?as\s+an?\s+"
    r"(?:(?:lifelong|life-long|strict|long-?time|practi[cs]ing|committed|proud|fellow|"
    r"full-time|part-time|newly\s+diagnosed)\s+)*"
    r"(?P<what>type\s+[12]\s+diabetic|[\w-]+(?:\s+[\w-]+)?)"
    r"(?=\s*(?:,|myself\b|$|[!?])|\s+(?:is|are|can|could|should|do|does|what|how|any|which|"
    r"where|this|that|these|those|i|I|I'm|it|it's)\b)",
    _I,
)
# Asides about a stage of life, not the speaker now ("as a kid", "as a student back then").
_NOT_NOW = frozenset({"student", "intern"})


def _reading(what: str) -> tuple[str, str] | None:
    key = " ".join(what.lower().split())
    diabetic = re.fullmatch(r"type\s+([12])\s+diabetic", key)
    if diabetic is not None:
        return "medical_conditions", f"type {diabetic[1]} diabetes"
    if key in DIETS:
        return "diet", DIETS[key]
    if key in CONDITIONS:
        return "medical_conditions", CONDITIONS[key]
    if key in DEMONYMS:
        return "nationality", DEMONYMS[key]
    title = job_title(what)
    if title is not None and title.lower() not in _NOT_NOW:
        return "job_title", title
    return None


# A request that states the speaker's pronouns: "could you use she/her for me from now on?"
_ASKED_PRONOUNS = re.compile(
    r"\b(?:could|can|would|will)\s+you\s+(?:please\s+)?(?:start\s+)?(?:using|use)\s+"
    r"(?P<set>(?:he|she|they)/(?:him|her|them|they|she|he|his|hers|theirs))\s+(?:for|with)\s+me\b",
    _I,
)


def read_asides(text: str) -> list[Finding]:
    """The facts the turn's sentence-opening "as a …" asides state about the speaker, and
    the pronouns a request asks for."""
    found: list[Finding] = []
    asked = _ASKED_PRONOUNS.search(text)
    if asked is not None:
        value = asked["set"].lower()
        found.append(Finding("pronouns", value, f"User's pronouns are {value}."))
    for aside in _ASIDE.finditer(text):
        what = aside["what"]
        reading = _reading(what)
        if reading is None and " " in what:
            reading = _reading(what.split()[0])  # "as a vegan myself", "as a nurse here"
        if reading is not None:
            attribute, value = reading
            said = f"User is {'an' if value[0].lower() in 'aeiou' else 'a'} {value}."
            if attribute == "medical_conditions":
                said = f"User has {value}."
            found.append(Finding(attribute, value, said, INFERRED))
    return found
