"""A correction as a swap of words: "Portland not Portsmouth", "not sasha, Sacha".

The reader often cannot tell which slot a correction is about ("his name is Mac
not Max": a pet? a partner?), but the words it swaps are plain: the old value,
which the subject's memory may hold, and the new one. Only the resolver knows
what is held, so the rules read the swap and the resolver applies it to the one
held fact the old words name (``processors.corrected``). Only the clear shapes
are read; anything else stays a question for a human.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Swap", "read_redo", "read_swap"]

_I = re.IGNORECASE

# The pieces of a turn a swap is read within: commas and clause punctuation end a phrase.
# A full stop or colon inside a token ("jane.doe@proton.me", "10:30") ends nothing.
_PIECES = re.compile(r"\s*(?:[,;!?()]|[.:](?=\s|$)|\s[\u2013\u2014-]\s|\u2014)\s*")
_NOT = re.compile(r"^(?P<new>.*?)\s*\bnot\s+(?P<old>.+)$", _I)
_MEANT = re.compile(
    r"^(?:when\s+i\s+said\s+(?P<old>.+?)\s+)?i\s+meant\s+(?P<new>.+?)(?:\s+not\s+(?P<old2>.+))?$|"
    # "i said lisbon but its porto": the word said, then the right one.
    r"^i\s+(?:said|wrote|typed|put)\s+(?P<old3>.+?)\s+but\s+(?:(?:it's|its|it\s+is|it\s+should\s+be|"
    r"i\s+meant|i\s+mean)\s+)?(?P<new3>.+)$",
    _I,
)
# Words that open the new phrase without being part of the value.
_LEAD = re.compile(
    r"^(?:(?:ugh|ah|oh|oops|no|nope|nah|wait|sorry|lol|haha|lmao|ok|okay|well|autocorrect|"
    r"correction|small\s+correction|actually|"
    r"typo|my\s+bad|it's|its|it\s+is|i\s+meant|(?:it\s+)?should\s+(?:be|say|read)|make\s+(?:that|it)|"
    r"(?:i'?m|we'?re|i\s+am|we\s+are)(?:\s+(?:actually|still|really))?(?:\s+(?:in|at|from|on|with|a|an))?|"
    # "i live in leicester", "we use couchdb", "i grew up in kerry": the speaker and a verb of
    # the slot come before the value.
    r"(?:(?:i|we)\s+)?(?:actually\s+)?(?:live|work|grew\s+up|use|speak|have|"
    r"bank|study)(?:\s+(?:in|at|for|with|on))?|(?:i\s+)?meant(?:\s+to\s+(?:say|type|write|put))?|"
    r"his\s+name\s+is|her\s+name\s+is|its\s+name\s+is|(?:his|her|its)\s+name's|"
    r"my\s+(?:\w+\s+){1,3}(?:is|are)|(?:the\s+)?last\s+(?:\w+\s+)?(?:digits|numbers)\s+are|"
    r"the\s+right\s+one\s+is|(?:my\s+)?(?:\w+\s+)?(?:ends|ending|starts|starting)\s+(?:in|with))\b\s*)+",
    _I,
)
# Words that end the value: what comes after it says why or when.
_TAIL = re.compile(
    r"\s+(?:with|the|for|about|on|at|in|lol|typo|sorry|either|btw|actually|instead|then|obviously|"
    r"haha|lmao|oops|autocorrect|please|my\s+bad|my\s+mistake)\b.*$",
    _I,
)
# Marks around a word that are no part of it: "*vegan", "vancouver 🙈", "'Sacha'".
_MARKS = re.compile(r"^[^\w+@]+|[^\w)]+$")
# The "not" denies something rather than correcting it: "not remote anymore", "I do not eat…".
_DENIAL = re.compile(
    r"\b(?:any\s*more|no\s+longer|longer|yet|really|sure)\b|^(?:i|we|you|he|she|they|it|do|does|did|"
    r"am|is|are|was|were|have|has|had|can|will|would)\b",
    _I,
)
_MAX_WORDS = 4
# Words a "said … but" or "not …" swaps that are no value: "I said no but it's fine".
_NO_VALUE = frozenset(
    {"no", "yes", "that", "this", "it", "so", "ok", "okay", "fine", "sure"}
    # The owning-up itself: "the train goes to Bath, not Bristol, sorry my mistake".
    | {"my mistake", "mistake", "my bad", "sorry", "oops", "typo", "autocorrect", "lol", "haha"}
)
# "lisbon? no, porto", "berlin?? nope — bremen": the word asked back and denied, then the right one.
_ASKED_BACK = re.compile(
    r"^(?!(?:is|are|was|were|do|does|did|what|where|which|who|how|why|when|can|could|should|"
    r"would|will|have|has|am|i|you|it|that|this)\b)(?P<old>[\w' .@+-]{1,40}?)\s*\?+\s*"
    r"(?:(?:no+|nah)\s*[,!.:\u2014-]|nope\b|wait\s+no\b|no\s+wait\b)[\s,!.:\u2014-]*"
    r"(?P<new>[^,;!?]{1,40}?)[\s.!]*$",
    _I,
)

# "ugh I typed barclays, I meant HSBC": the word said, then across the comma the right one.
_SAID_THEN_MEANT = re.compile(
    r"\bi\s+(?:said|wrote|typed|put)\s+(?P<old>[\w' .@+-]{1,40}?)\s*[,;.]\s*"
    r"(?:(?:but|sorry|oops|ugh)\s+)*(?:i\s+meant|i\s+mean|it's|its|it\s+is|it\s+should\s+be)\s+"
    r"(?P<new>[^,;!?]{1,40}?)[\s.!]*(?:[,;]|$)",
    _I,
)
# "perdón, es Valencia, no Madrid", "desculpa, quer dizer Porto, não Lisboa": the Spanish and
# Portuguese shape of "<new>, not <old>", after its owning-up.
_SPANISH = re.compile(
    r"^(?:(?:perd[oó]n|disculpa|lo\s+siento|perdão|desculp[ae]|foi\s+mal|ops)\W+)+"
    r"(?:(?:es|soy|son|é|sou|quer\s+dizer|quis\s+dizer|quise\s+decir|quería\s+decir)\s+)?"
    r"(?P<new>[^,;!?]{1,40}?),?\s+(?:no|não)\s+(?P<old>[^,;!?]{1,40}?)[\s.!]*$",
    _I,
)


@dataclass(frozen=True, slots=True)
class Swap:
    """The words a correction takes back (``old``) and the ones it puts in (``new``)."""

    old: str
    new: str


def read_swap(text: str) -> Swap | None:
    """The one swap a correction states, or None when there is none or more than one."""
    text = text.replace("\u2019", "'").strip()
    asked = _ASKED_BACK.match(text) or _SAID_THEN_MEANT.search(text) or _SPANISH.match(text)
    if asked is not None:
        return _swap(asked["old"], asked["new"])
    pieces = [p for p in _PIECES.split(text) if p]
    found: set[tuple[str, str]] = set()
    swaps: list[Swap] = []
    for i, piece in enumerate(pieces):
        swap = _in_piece(piece, pieces[i - 1] if i else None, pieces[i + 1 : i + 2])
        if swap is not None and (swap.old.casefold(), swap.new.casefold()) not in found:
            found.add((swap.old.casefold(), swap.new.casefold()))
            swaps.append(swap)
    return swaps[0] if len(swaps) == 1 else None


def _in_piece(piece: str, before: str | None, after: list[str]) -> Swap | None:
    meant = _MEANT.match(_LEAD_FILLER.sub("", piece))
    if meant is not None and (meant["old"] or meant["old2"]):
        return _swap(meant["old"] or meant["old2"], meant["new"])
    if meant is not None and meant["old3"]:
        return _swap(meant["old3"], meant["new3"])
    said = _NOT.match(_JOINED_LEAD.sub("", piece))
    if said is None or _DENIAL.search(said["old"]):
        return None
    if _LEAD.sub("", said["new"]).strip():
        return _swap(said["old"], said["new"])
    # "vegetarian, not vegan" / "not sasha, Sacha with a c": the value beside the denial,
    # the one before it first.
    beside = [before] if before is not None else []
    for value in [*beside, *after]:
        swap = _swap(said["old"], value)
        if swap is not None:
            return swap
    return None


# Chat openers before "i meant": "sorry i meant text not phone call".
_LEAD_FILLER = re.compile(
    r"^(?:(?:ugh|ah|oh|oops|no|wait|sorry|actually|lol|so|ok|okay)\b[\s,]*)+", _I
)


def _swap(old: str, new: str) -> Swap | None:
    old = _MARKS.sub("", _TAIL.sub("", _MARKS.sub("", old.strip())))
    new = _MARKS.sub("", _TAIL.sub("", _LEAD.sub("", _MARKS.sub("", new.strip()))))
    if not old or not new or _DENIAL.search(new) or _JOINED.match(new):
        return None
    if old.casefold() == new.casefold():
        return None
    if old.casefold() in _NO_VALUE or new.casefold() in _NO_VALUE:
        return None
    if (
        len(old.split()) > _MAX_WORDS
        or len(new.split()) > _MAX_WORDS
        or any(_CLAUSE.search(_TOKENS.sub(" ", words)) for words in (old, new))
    ):
        return None
    # "the platform team not payments": an article opens the value without being part of it.
    return Swap(_ARTICLE.sub("", old) or old, _ARTICLE.sub("", new) or new)


# A piece that opens on a conjunction goes on to something else: "not two, but life happened".
_JOINED = re.compile(r"(?:but|and|so|because|cause|bc|though|or)\b", _I)
_JOINED_LEAD = re.compile(r"^(?:and|but|or|so)\s+", _I)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", _I)
# An address or a dotted name is one token, whatever words it spells: "jane.doe@proton.me".
_TOKENS = re.compile(r"\S*[@.]\S*")
# A verb in the new words makes them a clause, not a value: "the flight goes via porto".
_CLAUSE = re.compile(
    r"\b(?:goes|go|went|is|are|was|were|be|been|says|said|gave|gets|got|via|to|from|i|we|you|"
    r"he|she|they|me|live|lived|living|work|worked|working|grew|born|moved|meant|mean)\b",
    _I,
)


# An owning-up that puts a value right without naming the wrong one: "i misspoke earlier,
# we're in Porto", "ugh autocorrect — it's Jon", "perdón, es Sevilla".
_OWNING_UP = re.compile(
    r"\b(?:sorry|oops|typo|autocorrect|my\s+bad|my\s+mistake|misspoke|mistyped|misspel\w*|"
    r"correction|scratch\s+that|strike\s+that|make\s+(?:that|it)|wait\s+no|no\s+wait|"
    r"missing\s+a\s+digit|perd[oó]n|disculpa|desculp[ae]|quer\s+dizer|quise\s+decir)\b",
    _I,
)
# The owning-up's own words, and what comes with them: a piece of only these holds no value.
_OWNED = re.compile(
    r"^(?:(?:ugh|ah|oh|oops|no|nope|wait|sorry|lol|haha|typo|autocorrect|my\s+bad|my\s+mistake|"
    r"i\s+misspoke|misspoke|correction|small\s+correction|scratch\s+that|strike\s+that|"
    r"perd[oó]n|disculpa|desculp[ae]|earlier|before|again|all\s+along|on\s+my\s+part|still|"
    r"es|é|quer\s+dizer|quise\s+decir)\b[\s!.]*)+",
    _I,
)
# Chat's asterisk before or after the right word: "*Leicester", "bristol*".
_ASTERISK = re.compile(r"^(?=\*|.*\*[\s.!]*$)\*?\s*(?P<new>\w[\w' .@+-]{0,40}?)\s*\*?[\s.!]*$")
_REDO_WORDS = 3
# Only chat words and a spelling note end a value put right alone: a preposition may be
# part of what is said ("hunting for rentals"), which is then no value at all.
_REDO_TAIL = re.compile(
    r"\s+(?:lol|typo|sorry|actually|instead|then|haha|lmao|oops|autocorrect|earlier|btw|"
    r"my\s+bad|with\s+(?:a|an|one|two|double|\d)\b)\b.*$",
    _I,
)
# A piece that opens on a preposition says where or why, not what: "on the booking".
_LINK = re.compile(r"(?:on|in|at|for|to|with|of|about|by|from|into)\b", _I)


def read_redo(text: str) -> str | None:
    """The value a correction puts right without the wrong one ("*Leicester", "sorry, I
    meant Porto"): the last piece of an owning-up turn that is a value, else None."""
    text = text.replace("\u2019", "'").strip()
    pieces = [p for p in _PIECES.split(text) if p]
    star = _ASTERISK.match(pieces[-1]) if pieces else None
    if star is not None:
        return _redone(star["new"])
    if not _OWNING_UP.search(text) or read_swap(text) is not None:
        return None
    for piece in reversed(pieces):
        rest = _OWNED.sub("", piece).strip()
        if rest:
            return _redone(rest)
    return None


def _redone(words: str) -> str | None:
    new = _MARKS.sub("", _REDO_TAIL.sub("", _LEAD.sub("", _MARKS.sub("", words.strip()))))
    new = _ARTICLE.sub("", new)
    if not new or len(new.split()) > _REDO_WORDS or new.casefold() in _NO_VALUE or _LINK.match(new):
        return None
    return None if _CLAUSE.search(_TOKENS.sub(" ", new)) else new
