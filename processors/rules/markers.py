"""The words by which a speaker says a value changed or corrects one.

A high-stakes slot moves only on an explicit change or correction ("my email changed,
it's … now", "oops typo, it's …", "scratch that"); a plain restatement of another value
goes to a human. A candidate carries whether its clause or its turn says so.
"""

from __future__ import annotations

import re

__all__ = ["CHANGE", "states_change", "taken_back"]

# The speaker says a value changed, or corrects one: what lets a high-stakes slot move.
CHANGE = re.compile(
    r"\b(?:new|now|changed|changing|switched|switch(?:ing)?|moved|no\s+longer|any\s*more|"
    r"from\s+now\s+on|instead|these\s+days|updated?|correction|correct\s+one|typo|misspoke|"
    r"i\s+meant|wrong|replaced|got\s+a\s+new|not\s+the\s+old|old\s+one|going\s+forward|mistake|"
    r"autocorrect|mistyped?|misspelt|misspelled|scratch\s+that|strike\s+that|my\s+bad|oops|"
    r"make\s+that|agora|ahora|nuev[oa]|novo|ya\s+no|já\s+não|(?:don't|do\s+not|stop)\s+call(?:ing)?"
    r"\s+me|relocated|relocating|settled|emigrated|joined|promoted|as\s+of|from\s+today|"
    r"me\s+mud[eé]|me\s+mudei|mudei|mudamos|nos\s+mudamos|should\s+(?:be|say|read)|i\s+said|got\s+(?:married|engaged|divorced|hitched)|"
    r"the\s+move\s+to|(?:up|down)graded|quit|started|since\s+(?:moving|the\s+move)|"
    # "ditched hotmail", "retired my old gmail", "dropped the british passport": the old value
    # given up says the one given now is its replacement.
    r"ditched|dropped\s+(?:my|the)\s+(?:old|\w+\s+(?:passport|citizenship))|got\s+rid\s+of|"
    r"retired\s+(?:my|the)\s+old|went\s+(?:annual|monthly|yearly)|"
    # "please change my payment method to paypal": a change asked for is a change said.
    r"change\s+(?:my|me)\s+(?:\w+\s+){0,2}?to)\b",
    re.IGNORECASE,
)


# A correction by its shape, with no correcting word: "not vegetarian, vegan" (the denied
# value first), "*vegan" (chat's asterisk for a corrected word).
_CORRECTION_SHAPE = re.compile(
    r"^\W*(?:(?:sorry|oops|wait|no|nope|ah|ugh|my\s+bad)\W+)*not\s+[^,;]{1,40}(?:[,;]|\s[\u2013\u2014-])"
    r"\s*\w|^\s*\*\w",
    re.IGNORECASE,
)
_ADDRESS = re.compile(r"\S+@\S+|https?://\S+|\b\w+\.(?:com|org|net|io|me|co)\b")


def states_change(clause: str, turn: str) -> bool:
    """The clause or its turn says the value changed; an address's own words ("new.org")
    say nothing."""
    return any(
        CHANGE.search(_ADDRESS.sub(" ", text)) or _CORRECTION_SHAPE.search(text)
        for text in (clause, turn)
    )


# Taken back mid-message: "moved to bristol, no wait, bath", "it's 3 cats, scratch that, 4".
_TAKEN_BACK = re.compile(
    r"[,;.!-]\s*(?:no+\s*,?\s*wait|wait\s*,?\s*no+|scratch\s+that|strike\s+that|"
    # "sorry i mean kpmg", "i meant kpmg"; not "i meant to tell you".
    r"(?:(?:sorry\s*,?\s*)?i\s+meant|sorry\s*,?\s*i\s+mean)(?!\s+to\b))\b[\s,.!:-]*",
    re.IGNORECASE,
)


def taken_back(text: str) -> str:
    """``text`` from where the speaker takes back what they had just said: what came before
    is no statement of theirs any more (the correction after it is read, or asked about)."""
    last = max(_TAKEN_BACK.finditer(text), key=lambda m: m.start(), default=None)
    return text if last is None or not text[: last.start()].strip() else text[last.end() :]
