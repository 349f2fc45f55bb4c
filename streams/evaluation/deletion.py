"""Deletion intent and the review queue, scored: requests honoured, look-alikes left alone.

A request is **honoured** when the extractor erases exactly the scope asked
(the attributes named, or everything), or, when its scope cannot be read,
asks a human (a review question) and erases nothing. An erase of anything the
request did not name is **wider than asked**; any erase of a non-request (a
look-alike, or any other labelled turn or pair) is a **look-alike erasure**.
Both destroy truths, so both should be zero.

The cases come from the deletion set (``datasets/deletion.*.jsonl``) when one
is given, and always from the pairs and turns of the split: their
``deletion_request`` items are requests, every other item a non-request.

For the review queue, a pair labelled SUPERSEDE or REVIEW is a true change:
**caught** when it became a supersession or a review item; a review item on
any other pair (erase pairs aside) is **noise**.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import AwareDatetime, ValidationError

from slotwise.processors.model import ERASURE_QUESTION
from slotwise.streams.evaluation.data import (
    DatasetError,
    FrozenModel,
    LabelledTurn,
    Pair,
    jsonl_rows,
    subject_of,
    turn_observation,
)
from slotwise.streams.evaluation.offline import PairOutcome, Stages
from slotwise.topics.records import CandidateFact, Command

__all__ = [
    "DeletionCase",
    "DeletionScore",
    "ReviewScore",
    "deletion_cases",
    "read_deletions",
    "run_deletions",
    "score_deletions",
    "score_reviews",
]

Want = Literal["attributes", "subject", "ask"]


class _Erase(FrozenModel):
    attributes: tuple[str, ...] | None = None
    subject: bool | None = None
    ask: bool | None = None


class LabelledDeletion(FrozenModel):
    id: str
    kind: str
    text: str
    observed_at: AwareDatetime
    erase: _Erase | None
    note: str = ""


@dataclass(frozen=True, slots=True)
class DeletionCase:
    """One text and what it asks of the memory (``want`` None: nothing)."""

    id: str
    text: str
    observed_at: datetime
    want: Want | None
    attributes: frozenset[str] = frozenset()
    # "forget what I just told you" against a known incumbent: the reader cannot know
    # which fact was just told, so asking a human honours it too.
    or_ask: bool = False


@dataclass(frozen=True, slots=True)
class DeletionOutcome:
    id: str
    erased: tuple[str | None, ...]  # the attribute of each erase command (None: everything)
    asked: bool  # a review question was raised instead


@dataclass(frozen=True, slots=True)
class DeletionScore:
    requests: int
    honoured: int
    to_review: int  # requests that became a review question (honoured when unscopable)
    non_requests: int
    lookalike_erasures: int
    lookalike_reviews: int
    wider: int
    misses: tuple[str, ...] = ()

    @property
    def recall(self) -> float | None:
        return self.honoured / self.requests if self.requests else None


@dataclass(frozen=True, slots=True)
class ReviewScore:
    changes: int  # pairs labelled SUPERSEDE or REVIEW
    caught: int  # of them, a supersession or a review item
    review_items: int  # review decisions on pairs other than erase requests
    noise: int  # of them, on pairs that were not changes

    @property
    def caught_share(self) -> float | None:
        return self.caught / self.changes if self.changes else None

    @property
    def noise_share(self) -> float | None:
        return self.noise / self.review_items if self.review_items else None


def read_deletions(path: Path) -> list[DeletionCase]:
    """Every case of a ``deletion.*.jsonl`` file, in file order."""
    cases: list[DeletionCase] = []
    for number, row in jsonl_rows(path):
        try:
            item = LabelledDeletion.model_validate(row)
        except ValidationError as exc:
            raise DatasetError(f"{path}:{number}: not a labelled deletion: {exc}") from None
        erase = item.erase
        want: Want | None = None
        if erase is not None:
            want = "subject" if erase.subject else "ask" if erase.ask else "attributes"
        attributes = frozenset(erase.attributes or ()) if erase is not None else frozenset()
        cases.append(DeletionCase(item.id, item.text, item.observed_at, want, attributes))
    return cases


def deletion_cases(pairs: Sequence[Pair], turns: Sequence[LabelledTurn]) -> list[DeletionCase]:
    """The requests and non-requests among a split's pairs and turns."""
    cases: list[DeletionCase] = []
    for pair in pairs:
        erase = pair.erase
        if erase is None:
            cases.append(DeletionCase(pair.id, pair.turn.text, pair.turn.observed_at, None))
        elif erase.subject:
            cases.append(DeletionCase(pair.id, pair.turn.text, pair.turn.observed_at, "subject"))
        else:
            slot = erase.attribute or pair.incumbent.attribute
            want: Want = "attributes" if slot is not None else "ask"
            named = frozenset({slot}) if slot is not None else frozenset()
            pointed = erase.fact is not None
            cases.append(
                DeletionCase(pair.id, pair.turn.text, pair.turn.observed_at, want, named, pointed)
            )
    for turn in turns:
        if turn.erase is None:
            cases.append(DeletionCase(turn.id, turn.text, turn.observed_at, None))
        elif turn.erase.subject:
            cases.append(DeletionCase(turn.id, turn.text, turn.observed_at, "subject"))
        elif turn.erase.attribute is not None:
            named = frozenset({turn.erase.attribute})
            cases.append(DeletionCase(turn.id, turn.text, turn.observed_at, "attributes", named))
    return cases


async def run_deletions(
    stages: Stages, cases: Sequence[DeletionCase], progress: Callable[[], None] | None = None
) -> list[DeletionOutcome]:
    outcomes: list[DeletionOutcome] = []
    for case in cases:
        subject = subject_of(case.id, "eval-deletion")
        observation = turn_observation(case.id, case.text, case.observed_at, subject_id=subject)
        records = await stages.extractor.extract(observation)
        erased = tuple(
            r.attribute for r in records if isinstance(r, Command) and r.command == "erase"
        )
        asked = any(
            isinstance(r, CandidateFact)
            and r.question is not None
            and r.category == ERASURE_QUESTION
            for r in records
        )
        outcomes.append(DeletionOutcome(case.id, erased, asked))
        if progress is not None:
            progress()
    return outcomes


def _wider(case: DeletionCase, outcome: DeletionOutcome) -> bool:
    if not outcome.erased or case.want is None:
        return False
    if case.want == "subject":
        return False
    if case.want == "ask":
        return True
    return any(a is None or a not in case.attributes for a in outcome.erased)


def _honoured(case: DeletionCase, outcome: DeletionOutcome) -> bool:
    if case.want == "subject":
        return None in outcome.erased
    if case.want == "ask" or (case.or_ask and outcome.asked):
        return outcome.asked and not outcome.erased
    return set(outcome.erased) == set(case.attributes)


def score_deletions(
    cases: Sequence[DeletionCase], outcomes: Sequence[DeletionOutcome]
) -> DeletionScore:
    requests = [(c, o) for c, o in zip(cases, outcomes, strict=True) if c.want is not None]
    others = [(c, o) for c, o in zip(cases, outcomes, strict=True) if c.want is None]
    misses = tuple(
        f"{c.id}: want {c.want} {sorted(c.attributes)}, erased "
        f"{[a or 'everything' for a in o.erased]}{', asked' if o.asked else ''}: {c.text!r}"
        for c, o in requests
        if not _honoured(c, o)
    ) + tuple(
        f"{c.id}: non-request erased {[a or 'everything' for a in o.erased]}: {c.text!r}"
        for c, o in others
        if o.erased
    )
    return DeletionScore(
        requests=len(requests),
        honoured=sum(_honoured(c, o) for c, o in requests),
        to_review=sum(o.asked and not o.erased for _, o in requests),
        non_requests=len(others),
        lookalike_erasures=sum(bool(o.erased) for _, o in others),
        lookalike_reviews=sum(o.asked for _, o in others),
        wider=sum(_wider(c, o) for c, o in requests),
        misses=misses,
    )


_CHANGES = frozenset({"SUPERSEDE", "REVIEW"})


def score_reviews(
    pairs: Sequence[Pair], outcomes: Sequence[PairOutcome], found: Sequence[bool]
) -> ReviewScore:
    """``found``: per pair, whether it wrote the true supersession."""
    changes = caught = items = noise = 0
    for pair, outcome, right in zip(pairs, outcomes, found, strict=True):
        reviewed = outcome.decision == "REVIEW"
        if pair.decision in _CHANGES:
            changes += 1
            caught += right or reviewed
        if reviewed and pair.decision != "erase":
            items += 1
            noise += pair.decision not in _CHANGES
    return ReviewScore(changes, caught, items, noise)
