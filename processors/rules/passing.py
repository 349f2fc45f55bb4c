"""News said in passing before a question, a wish or a plan.

The clause splitter drops a whole sentence that asks ("since we moved to leeds, any
good gyms near me?") and a whole clause that wishes or plans ("new job starts monday,
wish me luck"), news and all, which is right for the value readers: a value must come
from a plain statement. The uncertain middle may still ask a human about the news, so
here a dropped sentence is cut at its commas, and the parts before the question, the
wish or the condition are read as clauses of their own, each by the splitter's own drop
rules. As in the splitter, a condition or a question governs everything after it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from slotwise.processors.rules.chat import expand
from slotwise.processors.rules.clauses import Clause, split_clauses

__all__ = ["said_in_passing"]

_I = re.IGNORECASE

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# Where the news ends and the remark begins: a comma or semicolon; "and" or "but" before a
# modal ("went vegan in january and honestly might never go back"); in a question, its
# opening word ("now that i'm vegan what do i do about honey?").
_PART = re.compile(
    r"\s*[,;]\s*|\s+(?:and|but)\s+(?=(?:\w+\s+)?(?:might|maybe|may|would|should|could|hope|wish|"
    r"probably|planning)\b)",
    _I,
)
_ASKING = re.compile(
    r"\s+(?=(?:what|how|where|which|who|why|any|can|could|should|do|does|is|are)\s)", _I
)
# "now that i'm vegan, …" says the state holds now and is new; as a clause of its own the
# splitter would strip the "now" as a filler.
_NOW_THAT = re.compile(r"^now\s+that\s+(?P<said>.+)$", _I)
# "had to put our dog down": a statement whose "I" was dropped, which the splitter takes for
# a question opening on "had" ("had you heard?"); without a question mark it tells what the
# speaker had to do.
_HAD_TO = re.compile(r"^(?=had\s+to\s)", _I)
# A quotation may be anyone's words: a sentence that opens one is left alone (an
# apostrophe inside a word opens none).
_QUOTED = re.compile(r"(?:^|[\s:(\[])['\"\u201c\u2018]\S|[\"\u201c\u201d]")


def said_in_passing(text: str, kept: Sequence[Clause]) -> list[Clause]:
    """The clauses of ``text`` that stand before a question, a wish, a plan or a condition
    in a sentence the splitter dropped, other than those it kept."""
    cased = any(ch.isupper() for ch in text)
    # What the splitter kept, part of a longer clause or whole, is heard already.
    seen = " | ".join(c.text.casefold() for c in kept)
    found: list[Clause] = []
    for said in _SENTENCE.split(expand(text.replace("\u2019", "'"))):
        sentence = said.strip()
        if not sentence or _QUOTED.search(sentence):
            continue
        asks = sentence.endswith("?")
        parts = [p for p in _PART.split(sentence.rstrip("?!. ")) if p]
        if asks and len(parts) == 1:
            parts = _ASKING.split(parts[0], maxsplit=1)
        if asks:
            parts = parts[:-1]  # the question itself
        for part in parts:
            told = _NOW_THAT.sub(r"\g<said> now", part)
            clauses = list(split_clauses(told if asks else _HAD_TO.sub("I ", told), cased=cased))
            if not clauses:
                break  # a condition, a plan or a question governs what follows
            if part.casefold() not in seen:
                found += [c for c in clauses if c.text.casefold() not in seen]
    return found
