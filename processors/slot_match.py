"""Slot matching: which numbered neighbour, if any, fills the candidate's slot.

Neighbours are shown to a model as small integers (1..n), never as ids: models
invent ids. An answer is accepted only if it is exactly one number from the
list or NONE; anything else (prose, an id, a number off the list) is rejected
and counts as NONE, because a missed match keeps both truths while a false
match destroys one.

Extraction may have answered the question already, against the subject's facts
it was shown (``CandidateFact.incumbent_match``, models/incumbents.py). Its answer
stands in for the question only while it covers what the question would show:
:func:`extracted_answer`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from slotwise.processors.model import Neighbour, SlotAnswer
from slotwise.topics.records import CandidateFact

__all__ = [
    "FOLD_OUTCOMES",
    "OfflineSlotMatcher",
    "extracted_answer",
    "parse_answer",
    "render_question",
]

# What became of an extraction's answer where the candidate is decided: used, or the
# question asked after all because a current neighbour was not among what it was
# answered against, or because the incumbent it named is no current neighbour now.
FOLD_OUTCOMES = ("used", "unseen_neighbour", "not_a_neighbour")

_NUMBER = re.compile(r"\s*#?\s*(\d{1,3})\s*\.?\s*")
_NONE = re.compile(r"\s*none\s*\.?\s*", re.IGNORECASE)


def render_question(candidate: CandidateFact, neighbours: Sequence[Neighbour]) -> str:
    """The per-call part of the prompt: the candidate and its numbered neighbours."""
    listing = "\n".join(f"  {i}. {n.fact.text}" for i, n in enumerate(neighbours, start=1))
    return (
        f'Candidate observation about the user:\n  "{candidate.text}"\n\n'
        f"Existing memories:\n{listing}\n\n"
        "Which existing memory, if any, describes the SAME property of this user as the "
        "candidate, such that both cannot be true at once unless the property allows "
        "several values? Answer with the memory number, or NONE. Answer NONE if they "
        "are merely about related topics."
    )


def parse_answer(raw: str | int | None, count: int) -> int | None:
    """Zero-based neighbour index from a model's answer, or None.

    Raises ValueError for an answer that is neither NONE nor a number in 1..count,
    so the caller can count and report rejected answers.
    """
    if raw is None:
        raise ValueError("empty answer")
    if isinstance(raw, int) and not isinstance(raw, bool):
        number = raw
    elif isinstance(raw, str):
        if _NONE.fullmatch(raw):
            return None
        found = _NUMBER.fullmatch(raw)
        if found is None:
            raise ValueError(f"answer {raw[:80]!r} is neither a list number nor NONE")
        number = int(found.group(1))
    else:
        raise ValueError(f"answer of type {type(raw).__name__} is neither a number nor NONE")
    if not 1 <= number <= count:
        raise ValueError(f"answer {number} is not on the list 1..{count}")
    return number - 1


def extracted_answer(
    candidate: CandidateFact, neighbours: Sequence[Neighbour]
) -> tuple[SlotAnswer | None, str | None]:
    """Extraction's answer to the candidate's slot question over ``neighbours``, and its
    outcome (one of :data:`FOLD_OUTCOMES`); ``(None, None)`` when it carries none.

    ``neighbours`` are the candidate's current neighbours of its own subject, read
    where it is decided (``vector_fetch``). The answer is used only when every one of
    them was considered by extraction (a fact stored since, by an earlier turn, was
    not) and, when it names an incumbent, that incumbent is one of them: so the fact
    is current, the subject's own, and near enough that the question would have shown
    it. Otherwise (None, outcome): the question is asked as if extraction had not
    answered, so a stale or wrong name never destroys anything.
    """
    match = candidate.incumbent_match
    if match is None:
        return None, None
    considered = set(match.considered)
    if any(n.fact.fact_id not in considered for n in neighbours):
        return None, "unseen_neighbour"
    if match.fact_id is None:
        return SlotAnswer(index=None, raw="NONE (extraction)"), "used"
    for index, neighbour in enumerate(neighbours):
        if neighbour.fact.fact_id == match.fact_id:
            return SlotAnswer(index=index, raw=f"{index + 1} (extraction)"), "used"
    return None, "not_a_neighbour"


class OfflineSlotMatcher:
    """The matcher used when no model is configured: always NONE.

    A neighbour at or above ``review_similarity`` is close enough that a human
    should look, so the answer carries a review reason (both facts are kept).
    """

    def __init__(self, review_similarity: float = 0.85) -> None:
        self._review_similarity = review_similarity

    async def match(self, candidate: CandidateFact, neighbours: Sequence[Neighbour]) -> SlotAnswer:
        close = [n for n in neighbours if n.similarity >= self._review_similarity]
        if not close:
            return SlotAnswer(index=None, raw="NONE")
        best = max(close, key=lambda n: n.similarity)
        return SlotAnswer(
            index=None,
            raw="NONE",
            review_reason=(
                f"no model configured; neighbour {best.fact.fact_id} is close "
                f"(cosine {best.similarity:.2f}) and may fill the same slot"
            ),
        )
