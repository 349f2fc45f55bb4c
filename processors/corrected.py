"""A correction's swap applied to the one held fact it names.

"sorry autocorrect, his name is Mac not Max": the reader could not place the
slot, but it read the swap (``processors.rules.swaps``) and the memory holds
``pets = dog named Max``. When the old words name exactly one current fact of a
slot, the corrected value is that fact's value with the old words replaced by
the new ones; the policy then decides as for any stated change (a corroborated
high-stakes fact still goes to a human; a many-valued slot, which the policy only
adds to, too). Anything less clear — no held fact named, two named, a
"correction" that only adds detail ("cambridge MA not cambridge uk") — stays a
question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from slotwise.processors.rules.swaps import Swap, read_swap
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.value_kinds import in_vocabulary, same_kind
from slotwise.topics.records import CandidateFact, Fact

__all__ = ["Corrected", "corrected"]


@dataclass(frozen=True, slots=True)
class Corrected:
    """The held fact a correction takes back, and the value it puts in its place."""

    held: Fact
    value: str
    # A many-valued slot: which value the correction replaces is plain, but the policy
    # only adds to such a slot, so a human applies it.
    many: bool = False


def corrected(
    candidate: CandidateFact, current: Sequence[Fact], schema: AttributeSchema
) -> Corrected | None:
    """The correction a question candidate carries (its ``value`` is the swap's new
    words), applied to the one current fact among ``current`` its old words name."""
    if candidate.attribute is not None or not isinstance(candidate.value, str):
        return None
    swap = read_swap(candidate.text)
    if swap is None:
        return _redone(candidate.value, current, schema)
    if swap.new != candidate.value:
        return None
    named = [
        (fact, value)
        for fact in current
        if fact.attribute is not None
        and isinstance(fact.value, str)
        and (value := _swapped(fact.value, _plain(swap, fact.value))) is not None
    ]
    return _the_one(named, schema)


def _redone(new: str, current: Sequence[Fact], schema: AttributeSchema) -> Corrected | None:
    """A correction that names only the right value ("*Leicester", "sorry, it's Jon"),
    applied to the one current fact whose value is of its kind."""
    named = [
        (fact, value)
        for fact in current
        if fact.attribute is not None
        and isinstance(fact.value, str)
        and (value := _plain(Swap(fact.value, new), fact.value).new).casefold()
        != fact.value.casefold()
        and same_kind(fact.attribute, fact.value, value)
    ]
    return _the_one(named, schema)


def _the_one(named: Sequence[tuple[Fact, str]], schema: AttributeSchema) -> Corrected | None:
    """The correction of the one held fact named, its value as the slot's vocabulary spells
    it; None when none or several were named."""
    if len(named) != 1:
        return None
    fact, value = named[0]
    spec = schema.get(fact.attribute) if fact.attribute is not None else None
    if spec is None:
        return None
    value = in_vocabulary(spec.name, value) or value
    return Corrected(fact, value, many=not spec.single_valued)


_APOSTROPHES = re.compile(r"['\u2019]")
# The nouns a value is said with that are no part of it: "the platform team", "three kids".
_SLOT_NOUNS = re.compile(r"\s+(?:team|plan|tier|squad|kids|children|child|kid)$", re.IGNORECASE)
_NUMBERS = dict(
    zip(
        "zero one two three four five six seven eight nine ten".split(),
        map(str, range(11)),
        strict=True,
    )
)


def _plain(swap: Swap, held: str) -> Swap:
    """The swap's words as the held value spells them: a slot noun the held value has not
    dropped ("platform team" for a held "payments"), a number in words for held digits."""
    old, new = swap.old, swap.new
    if not _SLOT_NOUNS.search(" " + held):
        old, new = _SLOT_NOUNS.sub("", old), _SLOT_NOUNS.sub("", new)
    if held.isdigit():
        old, new = _NUMBERS.get(old.casefold(), old), _NUMBERS.get(new.casefold(), new)
    return Swap(old, new)


def _swapped(held: str, swap: Swap) -> str | None:
    """``held`` with the old words put right, or None when the old words do not name it."""
    value, old, new = held.casefold(), swap.old.casefold(), swap.new.casefold()
    if (len(old) < 2 and not old.isdigit()) or _within(value, new):
        return None  # the "new" value only details the held one
    if held.isdigit() and not new.isdigit():
        return None  # a count is put right by a count
    if _APOSTROPHES.sub("", value) == _APOSTROPHES.sub("", old):
        return swap.new  # "sainsburys" names the held "Sainsbury's"
    if len(value) >= 3 and _within(value, old):
        # "phone call" names the held "phone", and "text" replaces it; but "the Wise app, not
        # the Monzo one" names another thing of its own, unless said the same way.
        before, _, after = old.partition(value)
        if new.startswith(before) and new.endswith(after) and len(new) > len(old) - len(value):
            return swap.new[len(before) : len(swap.new) - len(after)]
        return swap.new if len(new.split()) == 1 else None
    if _within(old, value) and "@" in value and "@" in new:
        return swap.new  # a whole address put right by another: no part of it kept
    if _within(old, value):
        at = list(re.finditer(rf"(?<!\w){re.escape(old)}(?!\w)", value))[-1]
        before, after = held[: at.start()], held[at.end() :]
        # "product manager, not designer" said of "product designer": the new words
        # restate the held words around the old ones, which are not doubled; the held
        # words said elsewhere in them name another thing ("the senior engineer role").
        rest, lead = after.strip().casefold(), before.strip().casefold()
        if (rest and _within(rest, new) and not new.endswith(rest)) or (
            lead and _within(lead, new) and not new.startswith(lead)
        ):
            return None
        return _unrepeated(before, swap.new, after)
    digits = re.sub(r"\D", "", held)
    if old.isdigit() and new.isdigit() and len(old) >= 2 and digits.endswith(old):
        return held[: len(held) - len(old)] + swap.new if held.endswith(swap.old) else None
    return None


def _unrepeated(before: str, new: str, after: str) -> str:
    """``before + new + after`` without the words ``new`` opens or ends with that ``before``
    ends or ``after`` opens with."""
    said = new.split()
    ahead, behind = before.split(), after.split()
    lead = max((n for n in range(1, len(said) + 1) if _same(ahead[-n:], said[:n])), default=0)
    tail = max((n for n in range(1, len(said) - lead + 1) if _same(behind[:n], said[-n:])),
               default=0)  # fmt: skip
    kept_before = " ".join(ahead[: len(ahead) - lead])
    kept_after = " ".join(behind[tail:])
    if not lead and not tail:
        return before + new + after
    return " ".join(part for part in (kept_before, new, kept_after) if part)


def _same(held: list[str], said: list[str]) -> bool:
    return len(held) == len(said) and [w.casefold() for w in held] == [w.casefold() for w in said]


def _within(part: str, whole: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(part)}(?!\w)", whole) is not None
