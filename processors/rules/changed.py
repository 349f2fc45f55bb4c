"""The new value of a slot a clause says changed, read from the slot's own vocabulary.

"we're all postgres now, mysql is gone gone", "not remote anymore, back in the
office mon-fri", "i'm a german citizen now, had to give up the turkish one": the
words name a slot and a change in view (the cues and markers of
:mod:`~processors.rules.unsure`), but no sentence-shaped rule placed a value,
because chat does not say "I use Postgres". The slot's closed vocabulary then
names the candidates, and a value the clause marks as the old one ("not remote",
"give up the turkish one", "mysql is gone") is set aside. Exactly one value left
is the new one; none, or two, leave the turn to a human (the reader's question).

A move said without the sentence the head expects ("the move to Denver is done",
"moving to kuala lumpur was the best call", "me mudé a París", "mudamos pra
buenos aires") is read the same way: the place after the move's preposition,
only when the gazetteer knows it (a city, a country or a region), so "moved to
Slack" or "moved to the new office" never becomes a home.
"""

from __future__ import annotations

import re

from slotwise.processors.rules import gazetteer
from slotwise.processors.rules.classifier import mentions_in, value_mentions
from slotwise.processors.rules.clauses import NEGATION, Clause
from slotwise.processors.rules.findings import INFERRED, Finding
from slotwise.processors.rules.head.places import place_kind
from slotwise.processors.rules.head.standing import own
from slotwise.processors.rules.unsure import CUES, MANY, MARKER, NOT_NOW, OTHER
from slotwise.processors.rules.values import proper_noun, strip_the
from slotwise.processors.rules.words import DEMONYMS, PLANS, STOPWORDS

__all__ = ["read_changed"]

_I = re.IGNORECASE

# Words the vocabularies of :mod:`~processors.rules.classifier` leave out because alone they
# say too little ("my office is nice"), but which name the new value once the clause states
# a change in that slot ("back in the office", "eating fish again").
_CHANGE_WORDS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "work_arrangement": (
        (
            re.compile(
                # "back in the office three days a week" is hybrid, not the office.
                r"\b(?:in|at|to)\s+the\s+office\b(?!\s+(?:one|two|three|four|[1-4])\s+days)|"
                r"\boffice\s+full[- ]time\b|\bin-office\b",
                _I,
            ),
            "office",
        ),
    ),
    "diet": (
        (re.compile(r"\beat(?:ing)?\s+(?:meat|everything|anything)\b", _I), "omnivore"),
        (re.compile(r"\beat(?:ing)?\s+fish\b", _I), "pescatarian"),
    ),
}

# Words that mark a value as the one left behind, just before it ("not remote", "gave up
# the turkish one", "switched from mysql") or just after it ("mysql is gone", "remote
# anymore").
_LEFT_BEFORE = re.compile(
    r"\b(?:not|no\s+longer|no\s+more|from|quit(?:ting)?|left|leaving|cancell?(?:ed|ing)|ended|"
    r"(?:up|down)graded\s+from|gave\s+up|give\s+up|giving\s+up|"
    r"instead\s+of|ex-?|former(?:ly)?|stopped|ditched|dropped|swapped|switched\s+from|away\s+from|"
    r"out\s+of|than|over|done\s+with|rid\s+of|lost)\s+(?:(?:the|my|our|a|an|being|with|on|using|"
    r"all|that|this)\s+)*$",
    _I,
)
_LEFT_AFTER = re.compile(
    r"^(?:\s+one)?(?:\s+(?:is|was|'s|are|were))?\s*(?:\s(?:gone|out|over|dead|history|done|finished)\b|"
    r"\s(?:no\s+more|any\s*more|no\s+longer)\b)",
    _I,
)

# What may stand before a value the speaker now has: the clause's start, a verb of being or
# becoming, a move onto it ("we're all postgres now", "switched to rust", "I'm a german
# citizen now"), or words that name it as the old one (set aside later). "I cook vegan for
# my daughter" names a value in no such place.
_FRAMED = re.compile(
    r"(?:^|[,;]\s*|\b(?:ditched|swapped|traded|dropped|replaced|dumped|left)\s+(?:\S+\s+){1,3}for\s+|"
    r"\b(?:I'm|I\s+am|we're|we\s+are|I've\s+been|we've\s+been|been|being|became|"
    r"become|becoming|gone|went|turned|now|all|fully|back\s+(?:in|on)|to|onto|on|is|it's|so|not|"
    r"no\s+longer|from|"
    r"quit(?:ting)?|left|leaving|cancell?(?:ed|ing)|ended|gave\s+up|give\s+up|giving\s+up|"
    r"instead\s+of|ex-?|former(?:ly)?|stopped|ditched|dropped|swapped|than|over|rid\s+of)\s+)"
    r"(?:(?:a|an|the|my|our|full[- ]time|fully|completely|strictly|officially|now|all|being|"
    r"using|with|on)\s+)*$",
    _I,
)


def _mentions(attribute: str, text: str) -> list[tuple[int, int, str]]:
    """``(start, end, value)`` of each value of ``attribute`` the text names."""
    if attribute == "nationality":
        return [m for m in mentions_in(DEMONYMS, text) if _FRAMED.search(text[: m[0]])]
    found = [m for m in value_mentions(attribute, text) if _FRAMED.search(text[: m[0]])]
    for pattern, value in _CHANGE_WORDS.get(attribute, ()):
        found += [(m.start(), m.end(), value) for m in pattern.finditer(text)]
    return found


# A denial then its replacement: "we don't run sql server, it's all postgres", "i don't pay
# monthly, it's yearly". What follows the comma is outside the negation's reach.
_REPLACEMENT = re.compile(r"[,;]\s*(?:but\s+)?(?:it's|its|it\s+is|now|these\s+days)\b", _I)


def _new_value(attribute: str, text: str, *, replaced: bool) -> str | None:
    """The one value of ``attribute`` the text names that it does not mark as the old one;
    with ``replaced`` (a negated clause), only beside a value it does mark as the old one
    or after the denial's replacement, since the negation may otherwise deny the very
    value named ("I'm not allergic to …")."""
    kept: dict[str, int] = {}
    left = False
    for start, end, value in _mentions(attribute, text):
        if _LEFT_BEFORE.search(text[:start]) or _LEFT_AFTER.match(text[end:]):
            left = True
        else:
            kept.setdefault(value, start)
    if len(kept) != 1:
        return None
    ((value, start),) = kept.items()
    if replaced and not left:
        turn = _REPLACEMENT.search(text)
        if turn is None or start < turn.end() or not NEGATION.search(text[: turn.start()]):
            return None
        if NEGATION.search(text[turn.end() :]):
            return None
    return value


# A move and the place it goes to, in English, Spanish and Portuguese.
_MOVE = re.compile(
    r"\b(?:(?P<done>moved|relocated|emigrated)|(?P<pending>move|moving|relocation))\s+"
    # "relocated from boston to atlanta": the place left, then the one moved to.
    r"(?:back\s+|over\s+|out\s+)?(?:from\s+[\w' .-]{1,30}?\s+)?to\s+(?P<rest>.+)$|"
    # Spanish and Portuguese, the speaker's own moves only ("mudou" is someone else's).
    r"\b(?:(?P<dicho>me\s+mud[eé]|nos\s+mudamos|mudamos|me\s+mudei|mudei)\s+(?:de\s+vuelta\s+)?"
    r"(?:para\s+(?:o|a)|a|pra|para|pro)|(?:ahora\s+|agora\s+)?(?:vivo|moro)\s+(?:en|em|no|na))\s+"
    r"(?P<resto>.+)$",
    _I,
)
# Who moves: the speaker, or no one named ("the move to …", "moving to … was the best call").
_MOVER = re.compile(
    r"^(?:(?:I|we|we're|we've|I'm|I've|me|nos|ahora|agora|vivo|moro)\b|(?:the|our|my)\s+move\b|"
    r"(?:(?:finally|just|recently)\s+)?(?:moved|moving|move|relocated|mud)|"
    r"since\s+(?:(?:the|our|my)\s+move|moving)\b)",
    _I,
)
_SPEAKER = re.compile(r"^(?:I|we)\b", _I)
# "after 6 yrs in london we finally moved to brighton": the speaker just before the verb.
_MOVER_BEFORE = re.compile(
    r"(?:^|\s)(?:I|we)(?:'ve|\s+have)?(?:\s+(?:just|finally|recently|officially|actually))*\s+$", _I
)
# "moving to glasgow was never an option": the move itself denied, right after the place
# ("since moving to boulder I can't find a bagel" denies something else).
_DENIED_AFTER = re.compile(
    r"^\s*(?:(?:is|was|has|had|would|will|did|does|never)(?:n't|\s+not|\s+never)?\s+)?"
    r"(?:never|not|didn't|won't|isn't|wasn't|fell\s+through|didn't\s+happen)\b",
    _I,
)
# After the place: where the clause may go on. A move still to come ("the move to Denver is
# next month") is not yet a home; only a done one is ("… is done", "… was the best call").
_AFTER_DONE = re.compile(
    r"^\s*(?:$|[,;]|(?:en|em|el|in|on|last|this|after|finally|now|hace|h[aá]|faz|desde|yesterday|"
    r"ayer|ontem|semana|mes|m[eê]s|ago|recently|for\s+good|a\s+(?:few|couple|week|month|year)|"
    r"(?:\d+|two|three|four|five|six|few|couple)\s+(?:of\s+)?(?:days?|weeks?|months?|years?))\b)",
    _I,
)
_AFTER_PENDING = re.compile(
    r"^\s+(?:(?:is|was)\s+(?:done|finished|complete|official)|was|has\s+been|happened|went|"
    r"finally\s+happened)\b",
    _I,
)


def _known_place(words: list[str], *, native: bool) -> tuple[str, str, int] | None:
    """The longest opening of ``words`` the gazetteer knows: (attribute, value, words used);
    ``native``: the turn is Spanish or Portuguese, so a city's own-language name counts."""
    for size in range(len(words), 0, -1):
        place = " ".join(words[:size])
        if place.casefold() in PLANS or place.casefold() in STOPWORDS:
            return None  # "moved to Basic" is a plan; "Basic" is also a Nevada town's old name
        # A city by its own name or a native spelling ("París", and in a Spanish or
        # Portuguese turn "Lisboa"); an English word that is some town's other name
        # ("Basic") is no city.
        town = gazetteer.city(place) if native else gazetteer.city_by_name(place)
        if town is not None:
            return "home_city", town.name, size
        if gazetteer.country(place) is not None or gazetteer.region(place) is not None:
            kind = place_kind(place, cased=False)
            if kind is not None:
                return kind[0], kind[1], size
    return None


def _moved_home(clause: Clause) -> list[Finding]:
    found = _MOVE.search(clause.text)
    # "moving to glasgow was never an option": a move denied is none.
    if found is None or NEGATION.search(clause.text[: found.start()]):
        return []
    if not (_MOVER.match(clause.text) or _MOVER_BEFORE.search(clause.text[: found.start()])):
        return []
    rest = strip_the(found["rest"] or found["resto"])
    named = proper_noun(rest, clause.cased, limit=3)
    if named is None:
        return []
    # Uncased, a place's own words may be everyday ones ("mexico city", "salt lake city"):
    # the gazetteer's longest opening of the words as typed is the place.
    typed = list(re.finditer(r"[^\W\d_][\w'-]*", rest))[:3]
    words = named[0].split() if clause.cased else [t.group() for t in typed]
    known = _known_place(words, native=found["resto"] is not None)
    if known is None:
        return []
    attribute, value, size = known
    if clause.cased:
        after = " ".join(["", *words[size:]]) + named[1]
    else:
        after = rest[typed[size - 1].end() :]
    if _DENIED_AFTER.match(after):
        return []
    # "since the move to sheffield the commute is killing me": a move counted from is done.
    since = re.match(r"^since\b", clause.text, _I)
    if not since and not (_AFTER_PENDING if found["pending"] else _AFTER_DONE).match(after):
        return []
    return [Finding(attribute, value, f"User lives in {value}.", INFERRED)]


# A clause that opens on someone or something else ("the new hire on my team is fully
# remote", "my team is hybrid", "Dana moved to Leeds") states their value, not the speaker's.
_ELSEWHERE = re.compile(
    r"^(?:the|a|an|his|her|their|he|she|he's|she's|this|that|these|those|someone|somebody|"
    r"everyone|everybody|nobody|one\s+of)\b",
    _I,
)


def _speaker_s(clause: Clause) -> bool:
    text = clause.text
    if OTHER.match(text) or _ELSEWHERE.match(text):
        return False
    if re.match(r"^(?:my|our)\b", text, _I) and not own(clause):
        return False
    return not (clause.cased and re.match(r"^(?!I\b|I')[A-Z][a-z]+\s", text))


def read_changed(clause: Clause, placed: set[str]) -> list[Finding]:
    """The new value of each slot not in ``placed`` that the clause says changed and whose
    vocabulary names exactly one value the clause does not mark as the old one."""
    text = clause.text
    # The other-person pattern takes any capitalised word before "moved" ("We moved"), and
    # case is ignored: the speaker's own "I" and "we" are never someone else.
    if NOT_NOW.search(text) or (OTHER.match(text) and not _SPEAKER.match(text)):
        return []
    found: list[Finding] = []
    if not placed & {"home_city", "home_country", "home_region"}:
        found += _moved_home(clause)  # the move is itself the change
    negated = bool(NEGATION.search(text))
    if not (MARKER.search(text) or negated) or not _speaker_s(clause):
        return found
    for attribute, cue in CUES.items():
        if attribute in placed or not cue.search(text) or (negated and attribute in MANY):
            continue
        value = _new_value(attribute, text, replaced=negated)
        if value is not None:
            said = f"User's {attribute.replace('_', ' ')} is now {value}."
            found.append(Finding(attribute, value, said, INFERRED))
    return found
