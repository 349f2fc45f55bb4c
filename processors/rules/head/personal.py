"""Personal standing said in passing: how well a language is spoken, the way to reach the
speaker, the pronouns they accept, and the school behind a degree.

People rarely say "I speak Spanish" or "my preferred contact method is email"; they
say "my spanish is conversational", "fluent in Mandarin", "whatsapp is easiest for
me", "best way to reach me is signal", "any pronouns are fine", "did my PhD at
Karolinska". Each rule reads only the speaker's own clause (a language is read only
from the closed list of languages, a method only from the closed list of methods),
never a question, and never a clause about someone else.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.head.spoken import own_or_bare
from slotwise.processors.rules.values import lookup, organisation
from slotwise.processors.rules.words import INSTITUTION, LANGUAGES

__all__ = ["read_contact_preference", "read_degree", "read_language_level", "read_open_pronouns"]

_I = re.IGNORECASE

# A question, a wish, or someone else's: the clause states nothing about the speaker now.
_NOT_STATED = re.compile(
    r"\?|\b(?:if|would\s+(?:it|you|that)|should|might|maybe|wish|hope|want\s+to|wanna|"
    r"planning|thinking\s+(?:of|about)|used\s+to|as\s+a\s+kid|years\s+ago)\b|"
    r"^(?:he|she|they|(?:my|our|his|her|their)\s+(?:\w+\s+)?(?:sister|brother|mum|mom|"
    r"mother|dad|father|parents?|husband|wife|partner|boyfriend|girlfriend|son|daughter|"
    r"kids?|friend|boss|colleague|coworker|team)|(?-i:[A-Z][a-z]+)\s+(?:speaks|has))\b",
    _I,
)

# "my spanish is conversational", "fluent in Mandarin", "can get by in Italian",
# "learning korean … can hold a conversation now".
_LANGUAGE_LEVEL = (
    re.compile(
        r"^(?:(?:and|but|also|tbh|honestly|btw|oh)\s+)*my\s+(?P<lang>\w+)\s+is\s+(?:\w+\s+)?"
        r"(?:fluent|conversational|decent|good|solid|passable|intermediate|advanced|native|"
        r"near[\s-]native|pretty\s+good|not\s+bad)\b",
        _I,
    ),
    re.compile(
        r"^(?:(?:and|but|also|tbh|honestly|btw|I'm|I\s+am|now|pretty|fairly|quite|fully)\s+)*"
        r"(?:fluent|conversational|proficient|bilingual)\s+in\s+(?P<lang>\w+)\b",
        _I,
    ),
    re.compile(
        r"^I\s+(?:can\s+)?(?:get\s+by|hold\s+(?:my\s+own|a\s+conversation))\s+in\s+(?P<lang>\w+)\b",
        _I,
    ),
    re.compile(
        r"^(?:I've\s+)?(?:been\s+)?(?:learning|studying)\s+(?P<lang>\w+)\b.*\b(?:can\s+(?:now\s+)?"
        r"hold\s+a\s+conversation|(?:now|am)\s+(?:fluent|conversational))\b",
        _I,
    ),
)


def _stated(patterns: tuple[re.Pattern[str], ...], clause: Clause) -> Iterator[re.Match[str]]:
    """Each pattern's match in a clause that states something of the speaker's own."""
    if _NOT_STATED.search(clause.text):
        return
    for pattern in patterns:
        found = pattern.search(clause.text)
        if found is not None:
            yield found


def read_language_level(clause: Clause) -> list[Finding]:
    for found in _stated(_LANGUAGE_LEVEL, clause):
        language = lookup(found["lang"], LANGUAGES)
        if language is not None:
            return [Finding("languages", language, f"User speaks {language}.")]
    return []


_METHOD = (
    r"(?P<method>whats\s?app|signal|telegram|texts?|sms|e-?mails?|phone(?:\s+calls?)?|"
    r"(?:a\s+)?calls?)"
)
_METHODS = {"whatsapp": "whatsapp", "signal": "signal", "telegram": "telegram", "sms": "text"}
# "whatsapp is easiest for me", "best way to reach me is signal", "email is best".
_CONTACT_PREFERENCE = (
    re.compile(
        rf"^(?:(?:and|but|honestly|tbh|also)\s+)*{_METHOD}\s+(?:is|'s)\s+(?:always\s+|still\s+|"
        r"much\s+|way\s+)?(?:the\s+)?(?:best|easiest|easier|better|quickest|preferred|ideal)\b"
        r"(?:\s+(?:for\s+me|(?:way\s+)?to\s+(?:reach|contact|get\s+hold\s+of)\s+me|honestly|now|"
        r"these\s+days|tbh|than\s+(?:a\s+)?\w+))*\s*[.!]*$",
        _I,
    ),
    re.compile(
        r"^(?:the\s+)?(?:best|easiest|quickest)\s+(?:way\s+)?to\s+(?:reach|contact|get\s+hold\s+of)"
        rf"\s+me\s+is\s+(?:by\s+|via\s+|on\s+|over\s+)?{_METHOD}\b",
        _I,
    ),
    re.compile(
        r"^(?:(?:you\s+can|please|pls|just)\s+)?(?:reach|contact|message|ping)\s+me\s+"
        rf"(?:on|via|over|by|through)\s+{_METHOD}\b",
        _I,
    ),
    # "I prefer signal", "i'd rather you text", "whatsapp works best", "prefer email pls".
    re.compile(
        r"^(?:(?:and|but|honestly|tbh|also)\s+)*(?:I\s+|I'd\s+)?(?:(?:much\s+|really\s+)?prefer|"
        r"I'd\s+rather(?:\s+you)?|I'd\s+like)\s+(?:to\s+be\s+(?:contacted|reached)\s+(?:by|via|on|over)\s+|"
        rf"(?:by|via|on|over)\s+)?{_METHOD}"
        r"(?:\s+(?:please|pls|thanks|if\s+possible|only|over\s+\w+|to\s+\w+(?:\s+\w+)?|"
        r"than\s+(?:a\s+)?\w+))*\s*[.!]*$",
        _I,
    ),
    re.compile(
        rf"^(?:(?:and|but|honestly|tbh|also)\s+)*{_METHOD}\s+works\s+(?:best|better)"
        r"(?:\s+for\s+me)?\s*[.!]*$",
        _I,
    ),
)


def read_contact_preference(clause: Clause) -> list[Finding]:
    for found in _stated(_CONTACT_PREFERENCE, clause):
        word = re.sub(r"^(?:a\s+)", "", found["method"].lower()).replace(" ", "").replace("-", "")
        value = _METHODS.get(word) or (
            "text" if word.startswith("text") else "email" if word.startswith("email") else "phone"
        )
        return [Finding("preferred_contact_method", value, f"User prefers {value} contact.")]
    return []


# "honestly any pronouns are fine", "any pronouns work for me".
_ANY_PRONOUNS = re.compile(
    r"^(?:(?:honestly|tbh|and|but|oh|also|i\s+mean)\s*,?\s+)*any\s+pronouns?\s+(?:are|is|'re)?\s*"
    r"(?:fine|ok|okay|good|cool|great|work)\b",
    _I,
)


# "I go by they now", "pronouns: she", "I use he": one pronoun names its usual pair.
_ONE_PRONOUN = re.compile(
    r"^(?:(?:and|but|also|oh|btw|so)\s*,?\s+)*(?:I\s+(?:now\s+|only\s+)?(?:go\s+by|use)|"
    r"(?:my\s+)?pronouns?\s*(?:are|is|:|=|-)?)\s+(?P<word>he|she|they|xe|ze)"
    r"(?:\s+pronouns)?(?:\s+(?:now|these\s+days|please|thanks|only|from\s+now\s+on))*\s*[.!]*$",
    _I,
)
_PAIRS = {"he": "he/him", "she": "she/her", "they": "they/them", "xe": "xe/xem", "ze": "ze/hir"}


def read_open_pronouns(clause: Clause) -> list[Finding]:
    if _ANY_PRONOUNS.search(clause.text) is not None:
        return [Finding("pronouns", "any", "User accepts any pronouns.")]
    one = _ONE_PRONOUN.search(clause.text)
    if one is None:
        return []
    value = _PAIRS[one["word"].lower()]
    return [Finding("pronouns", value, f"User's pronouns are {value}.")]


_DEGREE = (
    r"(?:master'?s|masters|mba|phd|ph\.d\.?|doctorate|bachelor'?s|undergrad(?:uate)?|degree|"
    r"bsc|msc|b\.?a\.?|m\.?a\.?|llm|llb|mphil|semester(?:\s+abroad)?|exchange\s+(?:year|semester))"
)
# "did my PhD at Karolinska", "I have a master's from ETH Zurich", "finished an MBA at
# strathmore", "my degree is from UCT".
_DEGREE_AT = (
    re.compile(
        r"^(?:I\s+)?(?:just\s+)?(?:did|finished|completed|got|earned|have|hold|am\s+doing|'m\s+doing|"
        r"doing)\s+(?:my|a|an|the)\s+(?:[\w'-]+\s+){0,3}?" + _DEGREE + r"\s+(?:[\w'-]+\s+){0,3}?"
        r"(?:at|from)\s+(?P<rest>.+)$",
        _I,
    ),
    re.compile(
        r"^my\s+(?:[\w'-]+\s+){0,2}?" + _DEGREE + r"\s+(?:is|was)\s+from\s+(?P<rest>.+)$", _I
    ),
    re.compile(r"^(?:I(?:'m|\s+am)?\s+)?(?:just\s+)?enrolled\s+at\s+(?P<rest>.+)$", _I),
)


def read_degree(clause: Clause) -> list[Finding]:
    text = re.sub(r"^I'm\s+", "I am ", clause.text)
    if _NOT_STATED.search(text) or not own_or_bare(clause):
        return []
    for pattern in _DEGREE_AT:
        found = pattern.search(text)
        if found is None:
            continue
        school = organisation(
            re.split(r",|\s+(?:before|after|in\s+\d|last|this|back)\b", found["rest"])[0],
            clause.cased,
        )
        # Only a name that says it is a school ("… University", "MIT"): an institution is
        # kept by its usual name, which a bare "Karolinska" or "UCT" is not.
        if school is not None and INSTITUTION.search(school):
            return [Finding("education", school, f"User studied at {school}.")]
    return []
