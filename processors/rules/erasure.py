"""Deletion intent: "forget where I live" is a request of the memory, never a new fact.

A turn that asks the assistant to forget, delete, remove or stop keeping what
the speaker told it becomes ``erase`` commands (one per attribute, or one for
the whole subject), ordered with the subject's writes, and yields no fact.
Missing a request is a privacy failure the user cannot see, and erasing more
than was asked destroys truths, so the reader answers one of three ways:

* **erase** — the scope is read: the attributes named ("my address and my
  phone"), a topic ("everything about my health": the schema's category), or
  everything about the speaker (only when they say everything, all my data,
  or "forget me");
* **ask** — it is a request of the memory but its scope cannot be read
  ("forget what I just told you", "delete the stuff about my ex"): a human is
  asked, nothing is erased and nothing is guessed;
* **read** — the request quotes a statement ("forget that I'm vegan"): the
  extractor reads the statement for its slots, and asks when it finds none.

The request must be addressed to the memory: an imperative at the start of a
clause (after "please", "can you" …) or a wish ("I'd like my email
forgotten"). Tasks on passwords, inboxes, phones, files and calendars, other
people's requests, "forget it, never mind" and "I forgot my keys" are nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from slotwise.processors.rules.erasure_words import (
    ALL_OF_ME,
    ASK_OBJECT,
    LEAD,
    MEMORY,
    NAMED,
    NOT_MEMORY,
    POINTER,
    TOPICS,
    UNCLEAR,
    VERB,
    WANT_GONE,
)
from slotwise.processors.schema import AttributeSchema

__all__ = ["ErasureRequest", "read_erasure"]

_REQUEST = re.compile(rf"^{LEAD}(?P<verb>{VERB})\b(?P<rest>.*)$")
# Verbs that are about memory by themselves; "delete" and "remove" also name tasks.
_FORGET = re.compile(
    r"^(?:forget|unlearn|stop\s+(?:remembering|storing|keeping|saving|holding)|"
    r"(?:don't|dont|do\s+not|never|not)\s+(?:remember|store|keep|save|hold|retain|record)|"
    r"olvid|esque|no\s+(?:recuerdes|guardes)|n[aã]o\s+guard)"
)
# The speaker's own things, said as the object of the request.
_OWN = re.compile(
    r"^(?:about\s+|all\s+(?:of\s+)?|everything\s+(?:about\s+)?|toda\s+|"
    r"the\s+(?:info|information|details|stuff|bit|thing|part)\s+(?:about|on)\s+)?"
    r"(?:my|mi|mis|o\s+meu|a\s+minha|os\s+meus)\b"
)
_PERSONAL = re.compile(
    r"\b(?:my|i|me|i'm|i've|mine|mi|mis|mí|meu|minha|meus|eu|vivo|moro|trabalho|trabajo|"
    r"acabo|dije|disse|contei)\b"
)
_COLLECTIVE = re.compile(r"\b(?:we|our|we're)\b")
_QUANTIFIED = re.compile(
    r"\b(?:everything|all|anything|stuff|info|information|details|data|todo|toda|tudo)\b"
)
# What a quoted statement is introduced by: "forget (that) I said (that) …".
_SAID = re.compile(
    r"^(?:that\s+)?(?:i\s+(?:ever\s+|just\s+)?(?:said|told\s+you|mentioned)\s+(?:that\s+)?)?"
    r"(?P<said>(?:i|i'm|i've|my)\b.+)$"
)
_FILLER = re.compile(
    r"\b(?:please|pls|plz|too|as\s+well|now|then|from\s+(?:your\s+)?memory|por\s+favor|lol|"
    r"thanks|thx|ok|okay)\b|[,.!?]"
)
_CLAUSES = re.compile(
    r"(?<=[.!?:;])\s+|\n+|,\s+(?!(?:like|such\s+as|including|e\.g\.)\b)|\s+-+\s+|"
    r"\s+(?:and|but|y|e)\s+(?=(?:forget|delete|erase|remove|wipe|please|pls|olvida|borra|"
    r"esquece|apaga)\b)"
)


@dataclass(frozen=True, slots=True)
class ErasureRequest:
    """What a deletion request asks: ``attributes`` to erase (one ``None``: everything) for
    ``erase``; nothing for ``ask``; ``said``, the statement to read, for ``read``."""

    kind: Literal["erase", "ask", "read"]
    reason: str
    attributes: tuple[str | None, ...] = ()
    said: str | None = None


def read_erasure(text: str, schema: AttributeSchema | None = None) -> ErasureRequest | None:
    """The request the turn makes of the memory, or None when it makes none."""
    plain = text.replace("\u2019", "'").replace("\u2018", "'").strip()
    clauses = [c.strip() for c in _CLAUSES.split(plain) if c and c.strip()]
    for i, clause in enumerate(clauses):
        found = _request(clause.lower().rstrip(".!?"), [c.lower() for c in clauses[:i]], schema)
        if found is not None:
            kind, attributes, said = found
            if kind == "erase" and None not in attributes:
                attributes += _listed(clauses[i + 1 :], attributes, schema)
            return ErasureRequest(kind, clause[:120], attributes, said)
    return None


_Reading = tuple[Literal["erase", "ask", "read"], tuple[str | None, ...], str | None]


def _request(clause: str, before: list[str], schema: AttributeSchema | None) -> _Reading | None:
    wished = WANT_GONE.match(clause)
    if wished is not None:
        what = wished["what"] or wished["what2"] or wished["what3"] or ""
        verb, rest = "forget", f"{what} {wished['rest'] or wished['rest3'] or ''}".strip()
        if wished["rest3"] is not None:
            return "erase", (None,), None
    else:
        asked = _REQUEST.match(clause)
        if asked is None:
            return None
        verb, rest = asked["verb"], asked["rest"].strip()
        if verb in {"take", "reset"} and not MEMORY.search(rest):
            return None
    forgets = bool(_FORGET.match(verb))
    scope = _scope(rest, schema)
    if scope is _UNSURE:
        if not _personal(rest, forgets) or (NOT_MEMORY.search(rest) and not MEMORY.search(rest)):
            return None
        return "ask", (), None
    if scope:
        if not _personal(rest, forgets) or (NOT_MEMORY.search(rest) and not MEMORY.search(rest)):
            return None
        if not (forgets or MEMORY.search(clause) or _OWN.match(rest)):
            return None
        return "erase", scope, None
    if NOT_MEMORY.search(rest) and not MEMORY.search(rest):
        return None
    if ALL_OF_ME.search(rest):
        return "erase", (None,), None
    if POINTER.match(rest) and not _FILLER.sub(" ", POINTER.sub("", rest)).strip():
        return _pointed(before, schema)
    if ASK_OBJECT.match(rest) and (_personal(rest, forgets) or MEMORY.search(rest)):
        said = _SAID.match(re.sub(r"^about\s+", "", rest))
        if said is not None and said["said"] != rest:
            return "read", (), said["said"]
        return "ask", (), None
    return None


def _listed(
    after: list[str], asked: tuple[str | None, ...], schema: AttributeSchema | None
) -> tuple[str | None, ...]:
    """The attributes a list running on after the request names ("forget my name,
    pronouns, birthday"): only clauses that are nothing but names."""
    more: list[str] = []
    for clause in after:
        plain = clause.lower().rstrip(".!?")
        scope = _scope(plain, schema)
        if scope is _UNSURE:
            break
        named = [a for a in scope if a not in asked and a not in more]
        bare = _LIST_WORDS.sub(" ", _NAMES.sub(" ", plain)).strip()
        if not named or bare:
            break
        more += named
    return tuple(more)


def _pointed(before: list[str], schema: AttributeSchema | None) -> _Reading | None:
    """ "Delete that": the previous clause that spoke of the memory says what."""
    for clause in reversed(before):
        if MEMORY.search(clause) or WANT_GONE.match(clause):
            scope = _scope(clause, schema)
            return ("erase", scope, None) if scope and scope is not _UNSURE else ("ask", (), None)
    return None


def _personal(rest: str, forgets: bool) -> bool:
    return bool(_PERSONAL.search(rest) or (forgets and _COLLECTIVE.search(rest)))


# The words name a slot the reader cannot tell from another ("my job"): a human decides.
_UNSURE: tuple[str, ...] = ("?",)


def _scope(rest: str, schema: AttributeSchema | None) -> tuple[str, ...]:
    """The attributes the words name, a longer name claiming its words first, plus every
    attribute of a topic asked for as a whole ("all the work stuff"); ``_UNSURE`` when a
    name could mean either of two slots and no topic covers both."""
    claimed: list[tuple[int, int]] = []
    named: list[str] = []
    for pattern, attribute in _NAMED_RE:
        for match in pattern.finditer(rest):
            span = match.span()
            if any(a < span[1] and span[0] < b for a, b in claimed):
                continue
            claimed.append(span)
            if attribute not in named:
                named.append(attribute)
    unclear: set[str] = set()
    for pattern, attributes in _UNCLEAR_RE:
        for match in pattern.finditer(rest):
            if not any(a < match.end() and match.start() < b for a, b in claimed):
                unclear.update(attributes)
    if _QUANTIFIED.search(rest):
        spec = schema or _schema()
        for pattern, category in _TOPICS_RE:
            if pattern.search(rest):
                named += [a.name for a in spec if a.category == category and a.name not in named]
    return _UNSURE if unclear - set(named) else tuple(named)


_NAMES = re.compile("|".join(rf"\b(?:{p})\w*" for p, _ in NAMED))
_LIST_WORDS = re.compile(r"\b(?:and|or|my|the|too|also|please|pls|etc)\b|[,.!?]")
_NAMED_RE = tuple((re.compile(rf"\b(?:{p})"), a) for p, a in NAMED)
_UNCLEAR_RE = tuple((re.compile(rf"\b(?:{p})"), a) for p, a in UNCLEAR)
_TOPICS_RE = tuple((re.compile(rf"\b(?:{p})"), c) for p, c in TOPICS)


@cache
def _schema() -> AttributeSchema:
    """The shipped vocabulary, for callers that pass none (the topics' members)."""
    return AttributeSchema.load()
