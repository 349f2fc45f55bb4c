"""A new value given under a label: "new number - 07700 900123", "new job: designer at
Figma", "new city: Toronto", "we've moved - Bristol!"; or after "it's" in a turn about the
speaker's own number or email ("don't use the 415 number, it's +1 628 555 0147").

People announce a change as a heading and the value after a colon or a dash. The clause
splitter cuts at the dash, and no head rule reads a label, so such a turn was heard as a
change (a question) with its value lost. Here the label and its value are put back into
the plain statement the label stands for ("my number is 07700 900123") and read by the
head rule for that statement, with all its guards. A label is also a way to talk about the
new thing ("new city: loving it", "new job is killing me"), so each label asks more of its
value than the plain statement does: a number or an email has its shape; a home, a place a
library knows; a company or a name, a capital in a turn that uses capitals; a title, a
word for a job. Only the speaker's own label counts ("new", "my new", "updated"), and only
where a statement starts, so "my sister's new number: …" says nothing.
"""

from __future__ import annotations

import re
from enum import Enum

from slotwise.processors.rules import gazetteer
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding, Rule
from slotwise.processors.rules.head.identity import read_contact, read_home, read_name
from slotwise.processors.rules.head.standing import read_pronouns
from slotwise.processors.rules.head.work import read_employer, read_title

__all__ = ["read_labelled"]

_I = re.IGNORECASE


class _Asks(Enum):
    """What a label's value must be, beyond what its statement's rule checks."""

    SHAPE = "shape"  # a number or an email: the rule reads only that shape; "is" may label it
    VOCABULARY = "vocabulary"  # a title or pronouns: the rule knows the words
    PLACE = "place"  # a city or country a library knows
    NAME = "name"  # a capitalised name, in a turn that uses capitals


# What each label stands for: the statement its value completes, and the rule that reads it.
_STATEMENTS: tuple[tuple[str, str, Rule, _Asks], ...] = (
    (r"(?:phone\s+)?(?:number|phone|mobile|cell)", "my number is {}", read_contact, _Asks.SHAPE),
    (r"e-?mail(?:\s+address)?", "my email is {}", read_contact, _Asks.SHAPE),
    (r"job|gig|role|position", "I work as a {}", read_employer, _Asks.VOCABULARY),
    (r"(?:job\s+)?title|role|position", "my title is {}", read_title, _Asks.VOCABULARY),
    (r"job|gig|employer|company|workplace", "I work at {}", read_employer, _Asks.NAME),
    (r"city|home|town|country|place", "I live in {}", read_home, _Asks.PLACE),
    (r"(?:full\s+|legal\s+)?name|surname", "my name is {}", read_name, _Asks.NAME),
    (r"preferred\s+name|nickname", "call me {}", read_name, _Asks.NAME),
    (r"pronouns", "my pronouns are {}", read_pronouns, _Asks.VOCABULARY),
)  # fmt: skip
# Where a statement starts: the turn's start, or after a sentence's end, a comma or a dash.
_OPENING = r"(?:^|(?<=[.!?\n,;:\u2013\u2014-])\s*)"
_LABEL = re.compile(
    _OPENING + r"(?:(?:so|and|ok|okay|also|btw|update|quick\s+update|news)\s*[:,-]?\s+)?"
    r"(?:my\s+)?(?:new|updated)\s+(?P<label>[a-z]+(?:\s+[a-z]+)?)\s*"
    r"(?:(?P<mark>:|-+|\u2013|\u2014|=)|\bis\b)\s*(?P<value>[^.!?\n]+)",
    _I,
)
# "we've moved - Bristol!": the place a move went to.
_MOVED = re.compile(
    _OPENING + r"(?:(?:I|we)(?:'ve|\s+have)?\s+)?(?:finally\s+|officially\s+)?"
    r"(?:moved|relocated)\s*(?::|-+|\u2013|\u2014)\s*(?:to\s+)?(?P<value>[^.!?\n]+)",
    _I,
)
# What chat puts around a value: "Bristol!", "07700 900123 lol", "a designer".
_TRAILING = re.compile(r"\s*(?:[!)]+|\b(?:lol|haha|btw|fyi|yay|woo+)\b)\s*$", _I)
_ARTICLE = re.compile(r"^(?:a|an)\s+", _I)


def _bare(value: str) -> str:
    return _ARTICLE.sub("", _TRAILING.sub("", value).strip())


_STATEMENT_OF = {"phone": "my number is {}", "email": "my email is {}"}
_OWN_CONTACT = re.compile(
    r"\b(?:my|the)\s+(?:(?:new|old|current|work|personal|\d+)\s+)?(?:(?P<phone>number|phone|"
    r"mobile|cell)|(?P<email>e-?mail(?:\s+address)?))\b"
    # "ditched hotmail", "got a new sim": the mail service or the sim the speaker (the clause
    # has no other subject) gave up or got names their own.
    r"|(?:^|[.!?,;]\s*)(?:I(?:'ve|\s+have)?\s+)?(?:just\s+|finally\s+)?(?:ditched|dropped|"
    r"retired|quit|left|got\s+rid\s+of|switched\s+(?:from|off)|moved\s+off|got\s+a\s+new)\s+"
    r"(?:my\s+)?(?:old\s+)?(?:(?P<service>gmail|hotmail|outlook|yahoo|icloud|proton(?:mail)?|"
    r"fastmail)|(?P<sim>sim)(?!\s+for\b))\b",
    _I,
)
# "it's +44 7700 900 222 now" said on its own: an international number given as the new one.
_BARE_NUMBER = re.compile(
    r"^\W*(?:(?:so|ok|okay|and|but)\s+)?(?:it's|its|it\s+is)\s+(?P<value>\+\d[\d\s().-]+\d)"
    r"\s+now\W*$",
    _I,
)
_THEIRS = re.compile(
    r"\b(?:his|her|their|your|\w+'s)\s+(?:(?:new|old)\s+)?(?:number|phone|mobile|cell|e-?mail)\b",
    _I,
)
_GIVEN = re.compile(
    _OPENING + r"(?:(?:so|and|but|now)\s+)?(?:it's|its|it\s+is|(?:the\s+)?new\s+one(?:'s|\s+is))"
    r"\s+(?:now\s+)?(?P<value>[^\s,;!?]+(?:\s+\d[^\s,;!?]*)*)",
    _I,
)


def _fits(asks: _Asks, value: str, found: list[Finding], cased: bool) -> bool:
    if asks is _Asks.PLACE:
        return all(
            gazetteer.city_by_name(str(f.value)) or gazetteer.country(str(f.value)) for f in found
        )
    if asks is _Asks.NAME:
        return cased and value[:1].isupper()
    return True


def _contact_given(text: str, cased: bool) -> list[Finding]:
    """The number or email given after "it's" in a turn about the speaker's own one."""
    if _THEIRS.search(text):
        return []
    bare = _BARE_NUMBER.match(text)
    if bare is not None:
        return read_contact(Clause(_STATEMENT_OF["phone"].format(bare["value"]), cased, None))
    own = _OWN_CONTACT.search(text)
    if own is None:
        return []
    kind = "phone" if own["phone"] or own["sim"] else "email"
    for match in _GIVEN.finditer(text):
        read = read_contact(Clause(_STATEMENT_OF[kind].format(match["value"]), cased, None))
        if read and read[0].attribute == kind:
            return read
    return []


def read_labelled(text: str, cased: bool) -> list[Finding]:
    """The values given under a label in the turn ``text``, read as their statements."""
    found: list[Finding] = []
    for match in _LABEL.finditer(text):
        label = " ".join(match["label"].lower().split())
        value = _bare(match["value"])
        for words, statement, rule, asks in _STATEMENTS:
            # "my new job is killing me": only a number or an email is labelled with "is".
            plain = match["mark"] is None and asks is not _Asks.SHAPE
            if plain or not re.fullmatch(words, label, _I):
                continue
            read = rule(Clause(statement.format(value), cased, None))
            if read and _fits(asks, value, read, cased):
                found += read
                break
    for match in _MOVED.finditer(text):
        value = _bare(match["value"])
        read = read_home(Clause(f"I moved to {value}", cased, None))
        found += read if _fits(_Asks.PLACE, value, read, cased) else []
    return found + _contact_given(text, cased)
