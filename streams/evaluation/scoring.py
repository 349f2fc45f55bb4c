"""Scores: the article's table per mechanism, the breakdown per kind, the disagreements.

Matching mechanisms are scored as the seed scores them, on ``same_slot``: recall
is the share of same-slot pairs a mechanism flags, precision the share of its
flags that are same-slot. The pipeline itself is scored on what it wrote: a
supersession is right only when the expected pair was a SUPERSEDE, the
incumbent is the fact retired and the new value is the expected one; any
other supersession event is a false one.

The per-day figures are the article's arithmetic, not a measurement: at
:data:`WRITES_PER_DAY` writes of which :data:`CONFLICT_RATE` are genuine
conflicts, a recall ``r`` leaves ``(1 - r)`` of them unfound, and the flags it
raises at precision ``p`` include ``r (1 - p) / p`` false ones per conflict.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from slotwise.streams.evaluation.data import Expected, LabelledTurn, Pair
from slotwise.streams.evaluation.deletion import (
    DeletionCase,
    DeletionOutcome,
    DeletionScore,
    ReviewScore,
    score_deletions,
    score_reviews,
)
from slotwise.streams.evaluation.offline import PairOutcome, TurnOutcome

__all__ = [
    "CONFLICT_RATE",
    "FLOORS",
    "WRITES_PER_DAY",
    "Disagreement",
    "ExtractionScore",
    "KindScore",
    "Row",
    "Scores",
    "correct",
    "false_supersession",
    "implied",
    "norm",
    "score",
]

WRITES_PER_DAY = 432_000
CONFLICT_RATE = 0.11
FLOORS = (0.3, 0.5, 0.6, 0.7, 0.8, 0.86, 0.92)


def norm(value: object) -> str:
    """The evaluator's comparison (datasets/README.md): case-insensitive, trimmed."""
    return " ".join(str(value).split()).casefold()


def implied(precision: float | None, recall: float | None) -> tuple[float | None, float | None]:
    """Missed conflicts and false flags per day at the article's volume and conflict rate."""
    if recall is None:
        return None, None
    conflicts = WRITES_PER_DAY * CONFLICT_RATE
    missed = (1 - recall) * conflicts
    if not precision:
        return missed, None if recall else 0.0
    return missed, recall * conflicts * (1 - precision) / precision


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the mechanism table."""

    mechanism: str
    precision: float | None
    recall: float | None
    flagged: int
    hits: int
    positives: int
    missed_per_day: float | None
    false_per_day: float | None
    note: str = ""
    floor: float | None = None


def _row(
    mechanism: str, flags: Sequence[bool], truth: Sequence[bool], *, floor: float | None = None
) -> Row:
    flagged = sum(flags)
    hits = sum(f and t for f, t in zip(flags, truth, strict=True))
    positives = sum(truth)
    precision = hits / flagged if flagged else None
    recall = hits / positives if positives else None
    missed, false = implied(precision if flagged else 1.0, recall)
    return Row(mechanism, precision, recall, flagged, hits, positives, missed, false, floor=floor)


def _value_matches(outcome: PairOutcome, expected: Expected) -> bool:
    if expected.attribute is None or expected.value is None:
        return True
    if outcome.attribute != expected.attribute or outcome.value is None:
        return False
    return norm(outcome.value) == norm(expected.value)


def _erase_matches(pair: Pair, outcome: PairOutcome) -> bool:
    wanted = pair.erase
    if wanted is None or not outcome.erase:
        return False
    if wanted.subject:
        return None in outcome.erase
    attribute = wanted.attribute or pair.incumbent.attribute
    return attribute in outcome.erase


def correct(pair: Pair, outcome: PairOutcome) -> bool:
    """The pipeline decided what the label says (and with the expected value)."""
    if pair.decision == "erase":
        return outcome.decision == "erase" and _erase_matches(pair, outcome)
    if pair.decision == "none" or outcome.decision != pair.decision:
        return pair.decision == outcome.decision
    return pair.expected is None or _value_matches(outcome, pair.expected)


def true_supersession(pair: Pair, outcome: PairOutcome) -> bool:
    return (
        pair.decision == "SUPERSEDE"
        and outcome.decision == "SUPERSEDE"
        and outcome.supersedes_incumbent
        and correct(pair, outcome)
    )


def false_supersession(pair: Pair, outcome: PairOutcome) -> bool:
    """A supersession event that destroys a truth the label keeps."""
    return outcome.supersessions > 0 and not true_supersession(pair, outcome)


@dataclass(frozen=True, slots=True)
class KindScore:
    kind: str
    pairs: int
    correct: int
    supersessions_expected: int
    supersessions_found: int
    false_supersessions: int


@dataclass(frozen=True, slots=True)
class Disagreement:
    pair_id: str
    kind: str
    expected: str
    got: str
    why: str


@dataclass(frozen=True, slots=True)
class AttributeScore:
    attribute: str
    hits: int
    extracted: int
    labelled: int


@dataclass(frozen=True, slots=True)
class ExtractionScore:
    """(attribute, value) precision and recall of the schematized facts of labelled turns."""

    source: str  # "turns" or "pairs" (expected + also, when no turns file is given)
    hits: int
    extracted: int
    labelled: int
    per_attribute: tuple[AttributeScore, ...]
    erase_hits: int = 0
    erase_emitted: int = 0
    erase_labelled: int = 0
    misses: tuple[str, ...] = ()

    @property
    def precision(self) -> float | None:
        return self.hits / self.extracted if self.extracted else None

    @property
    def recall(self) -> float | None:
        return self.hits / self.labelled if self.labelled else None


@dataclass(frozen=True, slots=True)
class Scores:
    rows: tuple[Row, ...]
    kinds: tuple[KindScore, ...]
    disagreements: tuple[Disagreement, ...]
    decisions: dict[str, int]
    confusion: dict[str, dict[str, int]]
    extraction: ExtractionScore
    pairs: int
    correct: int
    false_supersessions: tuple[str, ...] = field(default=())
    # Deletion intent (requests honoured, look-alikes erased, wider than asked), when the
    # deletion cases were run, and the review queue (changes caught, noise).
    deletion: DeletionScore | None = None
    review: ReviewScore | None = None


def _shown_expected(pair: Pair) -> str:
    if pair.decision == "erase" and pair.erase is not None:
        target = pair.erase.attribute or ("everything" if pair.erase.subject else "that fact")
        return f"erase {target}"
    if pair.expected is None:
        return pair.decision
    return f"{pair.decision} {pair.expected.attribute}={pair.expected.value!r}"


def _shown_got(outcome: PairOutcome) -> str:
    if outcome.decision == "erase":
        return "erase " + ", ".join(a or "everything" for a in outcome.erase)
    if outcome.attribute is None and outcome.value is None:
        return outcome.decision
    return f"{outcome.decision} {outcome.attribute}={outcome.value!r}"


def _why(outcome: PairOutcome) -> str:
    seen = "; ".join(f"{c.attribute or 'free text'}={c.value!r}" for c in outcome.candidates)
    extracted = f" [extracted: {seen}]" if seen and outcome.decision != "none" else ""
    return f"{outcome.reason}{extracted}"


def score(
    pairs: Sequence[Pair],
    outcomes: Sequence[PairOutcome],
    turns: Sequence[LabelledTurn] = (),
    turn_outcomes: Sequence[TurnOutcome] = (),
    deletions: tuple[Sequence[DeletionCase], Sequence[DeletionOutcome]] | None = None,
) -> Scores:
    truth = [p.same_slot for p in pairs]
    rows = [
        _row("exact path (extraction, then key equality)", [o.exact_match for o in outcomes], truth)
    ]
    rows += [
        _row(
            f"vector floor >= {floor:.2f}",
            [o.cosine >= floor for o in outcomes],
            truth,
            floor=floor,
        )
        for floor in FLOORS
    ]
    if all(o.rerank_match is None for o in outcomes):
        rows.append(
            Row(
                "model re-ranker (top 5)",
                None,
                None,
                0,
                0,
                sum(truth),
                None,
                None,
                "not run: no model configured",
            )
        )
    else:
        rows.append(
            _row("model re-ranker (top 5)", [bool(o.rerank_match) for o in outcomes], truth)
        )
    found = [true_supersession(p, o) for p, o in zip(pairs, outcomes, strict=True)]
    false = [false_supersession(p, o) for p, o in zip(pairs, outcomes, strict=True)]
    positives = sum(p.decision == "SUPERSEDE" for p in pairs)
    flagged = sum(found) + sum(false)
    precision = sum(found) / flagged if flagged else None
    recall = sum(found) / positives if positives else None
    missed, false_day = implied(precision if flagged else 1.0, recall)
    rows.append(
        Row(
            "pipeline: supersessions written",
            precision,
            recall,
            flagged,
            sum(found),
            positives,
            missed,
            false_day,
        )
    )
    kinds: dict[str, list[tuple[Pair, PairOutcome]]] = defaultdict(list)
    for pair, outcome in zip(pairs, outcomes, strict=True):
        kinds[pair.kind].append((pair, outcome))
    kind_scores = tuple(
        KindScore(
            kind,
            len(items),
            sum(correct(p, o) for p, o in items),
            sum(p.decision == "SUPERSEDE" for p, _ in items),
            sum(true_supersession(p, o) for p, o in items),
            sum(false_supersession(p, o) for p, o in items),
        )
        for kind, items in kinds.items()
    )
    disagreements = tuple(
        Disagreement(p.id, p.kind, _shown_expected(p), _shown_got(o), _why(o))
        for p, o in zip(pairs, outcomes, strict=True)
        if not correct(p, o)
    )
    confusion: dict[str, dict[str, int]] = defaultdict(dict)
    for pair, outcome in zip(pairs, outcomes, strict=True):
        row = confusion[pair.decision]
        row[outcome.decision] = row.get(outcome.decision, 0) + 1
    extraction = (
        score_turns(turns, turn_outcomes) if turns else score_pair_extraction(pairs, outcomes)
    )
    return Scores(
        rows=tuple(rows),
        kinds=kind_scores,
        disagreements=disagreements,
        decisions=dict(Counter(o.decision for o in outcomes)),
        confusion=dict(confusion),
        extraction=extraction,
        pairs=len(pairs),
        correct=sum(correct(p, o) for p, o in zip(pairs, outcomes, strict=True)),
        false_supersessions=tuple(p.id for p, f in zip(pairs, false, strict=True) if f),
        deletion=score_deletions(*deletions) if deletions is not None else None,
        review=score_reviews(pairs, outcomes, found) if pairs else None,
    )


def _facts_score(
    source: str,
    labelled: Sequence[tuple[str, set[tuple[str, str]]]],
    extracted: Sequence[set[tuple[str, str]]],
) -> ExtractionScore:
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    misses: list[str] = []
    for (item_id, want), got in zip(labelled, extracted, strict=True):
        for attribute, _ in got:
            per[attribute][1] += 1
        for attribute, _ in want:
            per[attribute][2] += 1
        for attribute, _ in want & got:
            per[attribute][0] += 1
        wrong = sorted(got - want)
        lost = sorted(want - got)
        if wrong or lost:
            misses.append(f"{item_id}: extra {wrong} missing {lost}")
    scores = tuple(AttributeScore(a, *per[a]) for a in sorted(per))
    return ExtractionScore(
        source,
        sum(s.hits for s in scores),
        sum(s.extracted for s in scores),
        sum(s.labelled for s in scores),
        scores,
        misses=tuple(misses),
    )


def _set(facts: Sequence[Expected] | Sequence[object]) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for fact in facts:
        attribute, value = getattr(fact, "attribute", None), getattr(fact, "value", None)
        if attribute is not None and value is not None:
            found.add((attribute, norm(value)))
    return found


def score_turns(turns: Sequence[LabelledTurn], outcomes: Sequence[TurnOutcome]) -> ExtractionScore:
    base = _facts_score(
        "turns", [(t.id, _set(t.facts)) for t in turns], [_set(o.facts) for o in outcomes]
    )
    erase_labelled = sum(t.erase is not None for t in turns)
    emitted = sum(len(o.erase) > 0 for o in outcomes)
    hits = 0
    for turn, outcome in zip(turns, outcomes, strict=True):
        if turn.erase is not None and outcome.erase:
            wanted = None if turn.erase.subject else turn.erase.attribute
            hits += wanted in outcome.erase
    return ExtractionScore(
        base.source,
        base.hits,
        base.extracted,
        base.labelled,
        base.per_attribute,
        erase_hits=hits,
        erase_emitted=emitted,
        erase_labelled=erase_labelled,
        misses=base.misses,
    )


def score_pair_extraction(
    pairs: Sequence[Pair], outcomes: Sequence[PairOutcome]
) -> ExtractionScore:
    labelled = [
        (p.id, _set(([p.expected] if p.expected is not None else []) + list(p.also))) for p in pairs
    ]
    return _facts_score("pairs", labelled, [_set(o.candidates) for o in outcomes])
