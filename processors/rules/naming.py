"""The name the speaker wants to be called, told against the one they do not want:
"don't call me johnny, it's John", "don't call me bobby please, robert is fine",
"Sam is fine, nobody calls me Samantha".

Read from the whole sentence, since the two names sit on either side of a comma the
clause splitter cuts at. The wanted name must be a word that can be a name (not "that",
"weird", "rude") and differ from the refused one; in a turn with capitals, it must be
capitalised.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.findings import Finding

__all__ = ["read_name_to_use"]

_I = re.IGNORECASE
_NAME = r"[A-Za-z][\w'-]*"
_BREAK = r"(?:\s+(?:please|pls|anymore|any\s+more))?\s*[,;.!\u2013\u2014-]+\s*"
_FINE = r"\s+is\s+(?:fine|good|better|great|ok|okay|perfect|what\s+I\s+go\s+by)\b"
_SWAPS = (
    re.compile(
        rf"\b(?:don'?t|do\s+not|never|stop|nobody|no\s+one)\s+call(?:s|ing)?\s+me\s+(?P<old>{_NAME})"
        rf"{_BREAK}(?:(?:it's|its|it\s+is|I'm|just|only)\s+(?P<new>{_NAME})\b|"
        rf"(?P<fine>{_NAME}){_FINE}|call\s+me\s+(?P<call>{_NAME}))",
        _I,
    ),
    re.compile(
        rf"^(?P<fine>{_NAME}){_FINE}\s*[,;.!-]+\s*(?:nobody|no\s+one)\s+calls\s+me\s+"
        rf"(?P<old>{_NAME})",
        _I,
    ),
)
_NOT_A_NAME = frozenset(
    "that this it me him her them anything something that's weird rude wrong fine ok okay "
    "the a an my just only please pls sir madam mate dude bro babe honey".split()
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def read_name_to_use(text: str) -> list[Finding]:
    cased = any(ch.isupper() for ch in text)
    for sentence in _SENTENCES.split(text):
        for pattern in _SWAPS:
            found = pattern.search(sentence.strip())
            if found is None:
                continue
            named = {k: v for k, v in found.groupdict().items() if v is not None}
            new = named.get("new") or named.get("fine") or named.get("call") or ""
            if (
                new.casefold() in _NOT_A_NAME
                or named["old"].casefold() in _NOT_A_NAME
                or new.casefold() == named["old"].casefold()
                or (cased and not new[:1].isupper())
            ):
                continue
            name = new[:1].upper() + new[1:]
            return [Finding("preferred_name", name, f"User prefers to be called {name}.")]
    return []
