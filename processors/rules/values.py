"""Reading a value at the start of what follows a rule's lead.

A proper-noun phrase ends where the clause ends or a new phrase starts; lists
split at commas and conjunctions; names and aliases are looked up in the word
lists; a job title must end in a known job.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.words import (
    ACRONYMS,
    JOB_HEADS,
    PARTICLES,
    PROPER_BLOCK,
    STOPWORDS,
    TITLE_FILLER,
)

__all__ = [
    "BOUNDARY",
    "STATE_AFTER",
    "bounded",
    "job_title",
    "lookup",
    "organisation",
    "proper_noun",
    "split_items",
    "strip_the",
]

_TOKEN = re.compile(r"[^\s,;:()\"!?]+|[,;:()\"!?]")
# What may follow a standing state ("I'm vegan now", "married for ten years"); "on Fridays" may not.
STATE_AFTER = re.compile(
    r"^\s*(?:$|,|(?:to|with|now|since|as\s+of|for|again|too|anymore|any\s+more|at\s+all|these\s+days|"
    r"last|this|yesterday|today|recently|happily)\b|in\s+\d{4})",
    re.IGNORECASE,
)
# An emoji or a flag after a value ends it: "moved to canada 🇨🇦".
_EMOJI = "\U0001f000-\U0001faff\u2600-\u27bf"
BOUNDARY = re.compile(
    rf"^\s*(?:$|[,;:({_EMOJI}]|"
    r"(?:on|in|as|since|for|with|from|at|near|now|currently|today|yesterday|"
    r"tomorrow|last|next|this|starting|until|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|but|so|because|where|which|who|though|although|"
    r"while|full-time|part-time|remotely|these\s+days|again|too|as\s+well|right\s+now|by|after|"
    r"before|during|over|to|back|originally|ever|anymore|\d|ago|recently|finally|already|btw|"
    r"fyi|lol|haha|a\s+(?:fortnight|week|month|year|while|few|couple)|the\s+(?:following|"
    r"(?:day|week|month|year)\s+(?:after|before))|"
    r"(?:two|three|four|five|six|several|a\s+few)\s+(?:days|weeks|months|years))\b)",
    re.IGNORECASE,
)


# "at ogilvy right now": the time the clause is true, no word of the name.
_RIGHT_NOW = re.compile(r"right\s+now\b", re.IGNORECASE)


def proper_noun(rest: str, cased: bool, limit: int = 4) -> tuple[str, str] | None:
    """A proper-noun phrase at the start of ``rest`` (canonically cased) and the text after it."""
    words: list[str] = []
    pending: list[str] = []
    end = 0
    for token in _TOKEN.finditer(rest):
        word = token.group()
        if words and word.lower() in PARTICLES:
            pending.append(word.lower())
            continue
        if not _name_word(word, cased) or _RIGHT_NOW.match(rest, token.start()):
            break
        words += [*pending, word]
        pending = []
        end = token.end()
        if len(words) >= limit:
            break
    if not words:
        return None
    phrase = " ".join(words) if cased else _title(words)
    return phrase, rest[end:]


def _name_word(word: str, cased: bool) -> bool:
    if word.lower() in PROPER_BLOCK or not any(ch.isalpha() for ch in word):
        return False
    if "'" in word:  # a possessive ("Stripe's office") names something else
        return False
    if cased:
        return word[0].isupper()
    return word.replace("-", "").isalpha() and word not in STOPWORDS


def _title(words: list[str]) -> str:
    return " ".join(
        w if (i and w in PARTICLES) else w[:1].upper() + w[1:] for i, w in enumerate(words)
    )


def bounded(found: tuple[str, str] | None) -> str | None:
    """The phrase, if what follows it ends the clause or starts a new phrase."""
    if found is None or not BOUNDARY.match(found[1]):
        return None
    return found[0]


_AGO = re.compile(
    r"\s+(?:about|around|almost|nearly|roughly)\s+(?:a|an|one|two|three|four|five|six|\d+|a\s+few)"
    r"\s+(?:days?|weeks?|months?|years?)\s+ago\b",
    re.IGNORECASE,
)


def strip_the(rest: str) -> str:
    """``rest`` without a leading "the", and without a hedged "about a month ago" (the
    date is read from the clause; here it would end a place name early)."""
    return _AGO.sub("", re.sub(r"^the\s+(?=\S)", "", rest, flags=re.IGNORECASE))


def organisation(rest: str, cased: bool) -> str | None:
    return bounded(proper_noun(strip_the(rest), cased))


def split_items(rest: str) -> list[str]:
    rest = re.sub(r"\s+(?:too|as\s+well|also)$", "", rest.strip(), flags=re.IGNORECASE)
    return [i.strip() for i in re.split(r"\s*(?:,|\band\b|&|/|\bor\b)\s*", rest) if i.strip()]


def lookup(item: str, table: dict[str, str]) -> str | None:
    words = item.lower().split()
    for size in (3, 2, 1):
        if len(words) >= size and " ".join(words[:size]) in table:
            return table[" ".join(words[:size])] if len(words) == size else None
    return None


# Titles people abbreviate, written out as the labelled data writes them.
TITLE_ALIASES = {
    "sre": "site reliability engineer",
    "swe": "software engineer",
    "pm": "product manager",
    "em": "engineering manager",
    "dev": "developer",
    "physio": "physiotherapist",
    "senior dev": "senior developer",
}


_WORKPLACES = frozenset(
    "engineering marketing sales finance hr team office bank shop store restaurant".split()
)


def job_title(raw: str) -> str | None:
    title = TITLE_FILLER.sub("", raw.strip())
    alias = TITLE_ALIASES.get(title.lower())
    if alias is not None:
        return alias
    words = title.lower().split()
    if words and words[-1] in ("dev", "devs"):
        words[-1] = "developer"  # "senior backend dev"
    if not 0 < len(words) <= 5 or not JOB_HEADS & set(words):
        return None
    # A workplace or department names no job alone, but may open one: "engineering manager",
    # "team lead", "office manager".
    leading = set(words[:-1]) & _WORKPLACES
    if (set(words) - leading) & (STOPWORDS - {"of", "and", "&"}) or not all(
        w.replace("-", "").replace("/", "").isalpha() for w in words
    ):
        return None
    return " ".join(w.upper() if w in ACRONYMS else w for w in words)
