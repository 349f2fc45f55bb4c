"""The LoCoMo replay scored against judgements made by reading.

    python -m slotwise.loadtest.locomo_judged replay.jsonl [--judged datasets/locomo_judged.jsonl]

``replay.jsonl`` is what :mod:`loadtest.locomo_worker` dumped: every fact the
worker wrote. ``datasets/locomo_judged.jsonl`` holds, per line, either the
verdict on one written fact, found again by its source turn (``conv-26:D1:3``),
its attribute and a digest of its value (slotted) or text (free) — ``true``,
``false``, ``wrong_person`` (a fact about someone else stored as the
speaker's) or ``cut`` (the text stops mid-clause) with a one-line reason — or
a turn chosen by reading as a clear self-statement of a durable fact about
its speaker. The file holds ids, digests and verdicts only: the corpus's
licence keeps its text out of the repository.

The figures: precision of a seeded random sample of the written facts
(100 by default), precision of every slotted fact, facts on the wrong person
and facts cut mid-clause among those judged, and the share of the
self-statements that produced a fact (and a slotted one). A fact the
judgements do not cover is counted as unjudged, never as true, and
``--unjudged`` lists them with their turns for reading.
"""

from __future__ import annotations

import argparse
import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from slotwise.loadtest.locomo import read_turns
from slotwise.loadtest.locomo_worker import WrittenFact
from slotwise.topics.codec import loads
from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "JUDGED",
    "Judgements",
    "Score",
    "fact_key",
    "load_judgements",
    "load_replay",
    "main",
    "sample",
    "score",
]

JUDGED = Path(__file__).resolve().parents[1] / "datasets" / "locomo_judged.jsonl"
SAMPLE_SIZE = 100
SAMPLE_SEED = 33
Verdict = Literal["true", "false", "wrong_person", "cut"]
VERDICTS: frozenset[str] = frozenset({"true", "false", "wrong_person", "cut"})
FactKey = tuple[str, str | None, str]


class JudgedError(SlotwiseError, ValueError):
    """A judgements or replay file is not shaped as this module writes them."""


def fact_key(fact: WrittenFact) -> FactKey:
    """Turn id, attribute, and a digest of the value (slotted) or the text (free).

    A digest, so the judgements carry no text of the corpus; the value for a slotted
    fact, so a reworded text with the same reading keeps its verdict.
    """
    said = fact.value if fact.attribute is not None and fact.value is not None else fact.text
    digest = hashlib.sha256(said.strip().lower().encode()).hexdigest()[:12]
    return f"{fact.conversation}:{fact.dia_id}", fact.attribute, digest


@dataclass(frozen=True, slots=True)
class Judgements:
    verdicts: dict[FactKey, Verdict]
    self_statements: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Score:
    sample: int
    sample_judged: int
    sample_true: int
    slotted: int
    slotted_judged: int
    slotted_true: int
    wrong_person: int
    cut: int
    statements: int
    statements_any: int
    statements_slotted: int
    unjudged: tuple[WrittenFact, ...]

    def lines(self) -> list[str]:
        return [
            f"sample precision {_share(self.sample_true, self.sample_judged)} "
            f"({self.sample_true}/{self.sample_judged} judged of {self.sample})",
            f"slotted precision {_share(self.slotted_true, self.slotted_judged)} "
            f"({self.slotted_true}/{self.slotted_judged} judged of {self.slotted})",
            f"wrong person {self.wrong_person}  cut mid-clause {self.cut}",
            f"self-statements with a fact {_share(self.statements_any, self.statements)} "
            f"({self.statements_any}/{self.statements}), with a slotted fact "
            f"{self.statements_slotted}/{self.statements}",
        ]


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.2f}" if whole else "-"


def load_judgements(path: Path = JUDGED) -> Judgements:
    verdicts: dict[FactKey, Verdict] = {}
    statements: list[str] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        row = loads(line)
        if not isinstance(row, dict) or not isinstance(row.get("turn"), str):
            raise JudgedError(f"{path}:{number}: a row needs a 'turn'")
        if row.get("set") == "self_statement":
            statements.append(row["turn"])
            continue
        verdict = row.get("verdict")
        if verdict not in VERDICTS or not isinstance(row.get("key"), str):
            raise JudgedError(f"{path}:{number}: a fact row needs a 'key' and a verdict")
        verdicts[(row["turn"], row.get("attribute"), row["key"])] = verdict
    return Judgements(verdicts, tuple(dict.fromkeys(statements)))


def load_replay(path: Path) -> list[WrittenFact]:
    facts: list[WrittenFact] = []
    for line in path.read_text().splitlines():
        if line.strip():
            row = loads(line)
            if not isinstance(row, dict):
                raise JudgedError(f"{path}: every line must be an object")
            facts.append(WrittenFact(**row))
    return facts


def sample(
    facts: Sequence[WrittenFact], size: int = SAMPLE_SIZE, seed: int = SAMPLE_SEED
) -> list[WrittenFact]:
    """A seeded random sample, drawn from the facts in a fixed order so a fresh replay
    that wrote the same facts draws the same ones."""
    ordered = sorted(set(facts), key=_order)
    return random.Random(seed).sample(ordered, min(size, len(ordered)))


def _order(fact: WrittenFact) -> tuple[str, str, str, str, str]:
    turn, attribute, key = fact_key(fact)
    return turn, attribute or "", key, fact.text, fact.status


def score(
    facts: Sequence[WrittenFact],
    judgements: Judgements,
    size: int = SAMPLE_SIZE,
    seed: int = SAMPLE_SEED,
) -> Score:
    drawn = sample(facts, size, seed)
    slotted = sorted({f for f in facts if f.attribute is not None}, key=_order)
    judged = {f: judgements.verdicts.get(fact_key(f)) for f in (*drawn, *slotted)}
    by_turn: dict[str, list[WrittenFact]] = {}
    for fact in facts:
        by_turn.setdefault(fact_key(fact)[0], []).append(fact)
    said = [by_turn.get(turn, []) for turn in judgements.self_statements]
    return Score(
        sample=len(drawn),
        sample_judged=sum(judged[f] is not None for f in drawn),
        sample_true=sum(judged[f] == "true" for f in drawn),
        slotted=len(slotted),
        slotted_judged=sum(judged[f] is not None for f in slotted),
        slotted_true=sum(judged[f] == "true" for f in slotted),
        wrong_person=sum(v == "wrong_person" for v in judged.values()),
        cut=sum(v == "cut" for v in judged.values()),
        statements=len(said),
        statements_any=sum(bool(found) for found in said),
        statements_slotted=sum(any(f.attribute is not None for f in found) for found in said),
        unjudged=tuple(f for f, verdict in judged.items() if verdict is None),
    )


def _show_unjudged(unjudged: Iterable[WrittenFact], corpus: Path | None) -> None:
    """Each unjudged fact beside its turn and the turn before it, for reading (never saved)."""
    turns = read_turns(corpus)
    index = {f"{t.conversation}:{t.dia_id}": i for i, t in enumerate(turns)}
    for fact in unjudged:
        turn, attribute, key = fact_key(fact)
        at = index.get(turn)
        before = turns[at - 1].text if at else ""
        spoken = turns[at].text if at is not None else "?"
        print(f"{turn} {attribute} {key} [{fact.speaker}] {fact.text!r} value={fact.value!r}")
        print(f"    before: {before!r}\n    turn:   {spoken!r}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("replay", type=Path, help="the dump of loadtest.locomo_worker")
    parser.add_argument("--judged", type=Path, default=JUDGED)
    parser.add_argument("--size", type=int, default=SAMPLE_SIZE)
    parser.add_argument("--seed", type=int, default=SAMPLE_SEED)
    parser.add_argument("--unjudged", action="store_true", help="list them with their turns")
    parser.add_argument("--path", type=Path, default=None, help="locomo10.json (default: shared)")
    args = parser.parse_args(argv)
    facts = load_replay(args.replay)
    result = score(facts, load_judgements(args.judged), args.size, args.seed)
    print(f"facts {len(facts)}  slotted {result.slotted}")
    print("\n".join(result.lines()))
    if args.unjudged:
        _show_unjudged(result.unjudged, args.path)


if __name__ == "__main__":
    main()
