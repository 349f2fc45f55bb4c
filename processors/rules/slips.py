"""Whose correction a turn states: the speaker's own slip, put right.

"ugh autocorrect, Portland not Portsmouth", "i misspoke earlier, we're in Porto": the
words swapped (``swaps``) are the speaker's own correction only when the turn owns up to a
slip and speaks of no one else; a turn that states a change ("it's elena now, not helen")
or something not so now (``not_now``: a plan, a wish, a question) corrects nothing.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.swaps import Swap, read_redo, read_swap

__all__ = ["own_redo", "own_swap"]

_I = re.IGNORECASE

# The speaker says they put something right.
_OWN_SLIP = re.compile(
    r"\b(?:autocorrect|typo|sorry|correction|meant|misspoke|misspel\w*|mistyp\w*|wrong|oops|"
    r"wait|my\s+bad|i\s+said|i\s+typed|mistake|mix(?:ed|es)?\s+(?:\w+\s+)?up|fix|confus\w*|"
    r"unclear|perd[oó]n|desculp\w*|quer\s+dizer|quise\s+decir)\b",
    _I,
)
# A bare "no", or a turn that opens on the correction ("not leeds, leicester", "salford, not
# manchester"), owns up to a slip only when the turn says no change: "it's elena now, not
# helen" renames.
_WEAK_SLIP = re.compile(
    r"\b(?:no|nope|nah)\b|^\W*not\s+[^,;]{1,40}[,;\u2013\u2014-]|"
    r"^[\w' .-]{1,30},\s+not\s+[\w' .-]{1,30}(?:[,;.!\u2013\u2014]|\s-|$)",
    _I,
)
_CHANGED = re.compile(
    r"\b(?:now|changed|new|moved|any\s*more|no\s+longer|since|these\s+days|switched)\b", _I
)
# What an owning-up says that is no hypothetical: "sorry if i was unclear"; and the word
# asked back before its correction, no question: "brighton? no, hove".
_SLIP_ASIDES = re.compile(r"\bsorry\s+if\s+[^,.;!?]*|\?+(?=\s*(?:no|nope|nah|wait)\b)", _I)
# The sentences of a turn: someone else named in another one is no part of the swap's.
_SENTENCES = re.compile(r"(?<=[.!?\n])\s+")
# Someone else in the turn: the swap may be about them ("my brother's in Leeds, not York").
_SOMEONE = re.compile(
    r"\b(?:(?:my|our|his|her|their)\s+(?:sister|brother|mom|mum|mother|dad|father|friend|partner|"
    r"husband|wife|boss|manager|colleague|coworker|son|daughter|cousin|aunt|uncle|girlfriend|"
    r"boyfriend|roommate|flatmate|neighbou?r|parents?|kids?)|he|she|they|he's|she's|they're)\b",
    _I,
)


# "sorry not sorry" owns up to nothing and swaps no words.
_NO_SLIP = re.compile(r"\bsorry,?\s+not\s+sorry\b", _I)


def own_swap(text: str, not_now: re.Pattern[str]) -> Swap | None:
    """The swap of words the speaker's own correction states, if it is plainly theirs."""
    plain = _NO_SLIP.sub(" ", text.replace("\u2019", "'"))
    owned = _OWN_SLIP.search(plain) or (_WEAK_SLIP.search(plain) and not _CHANGED.search(plain))
    if not owned or not_now.search(_SLIP_ASIDES.sub(" ", plain)):
        return None
    swap = read_swap(plain)
    if swap is None:
        return None
    said = [s for s in _SENTENCES.split(plain) if swap.old.casefold() in s.casefold()]
    return None if any(_SOMEONE.search(s) for s in said or [plain]) else swap


def own_redo(text: str, not_now: re.Pattern[str]) -> str | None:
    """The value the speaker's own correction puts right without the wrong one."""
    plain = text.replace("\u2019", "'")
    if not_now.search(plain) or _SOMEONE.search(plain):
        return None
    return read_redo(plain)
