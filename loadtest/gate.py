"""How well the extraction gate holds, offline: its recall on fact-bearing turns, its savings.

    python -m slotwise.loadtest.gate [--json-dir bench-results]

* recall — of the labelled turns that state a fact or ask for an erase
  (``datasets/turns.{dev,test}.jsonl``), the share the gate passes to the
  model; a turn it skips is a fact lost, so the gate runs by default only while
  this is at least :data:`REQUIRED_RECALL` on every split;
* skip rate — the share of turns that make no extraction call: on the labelled
  turns without a fact, on LoCoMo's turns (real chat), and on the cascade
  benchmark's generated traffic (every message states something);
* CPU per turn of the gate, in microseconds.
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.loadtest.locomo import CorpusError, read_turns
from slotwise.loadtest.locomo import observations as locomo_observations
from slotwise.loadtest.results import Figure, print_summary, write_result
from slotwise.processors.gate import TurnGate
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.evaluation.data import read_turns as read_labelled
from slotwise.streams.evaluation.data import turn_observation
from slotwise.topics.records import Observation

__all__ = ["REQUIRED_RECALL", "GateScore", "main", "score_split", "skip_rate"]

REQUIRED_RECALL = 0.99
DATASETS = Path(__file__).resolve().parents[1] / "datasets"
SPLITS = ("dev", "test")


@dataclass(frozen=True, slots=True)
class GateScore:
    """The gate on one labelled split."""

    fact_bearing: int
    passed: int
    missed: tuple[str, ...]
    no_fact: int
    skipped: int

    @property
    def recall(self) -> float:
        return self.passed / self.fact_bearing if self.fact_bearing else 1.0


def score_split(gate: TurnGate, path: Path) -> GateScore:
    fact_bearing = passed = no_fact = skipped = 0
    missed: list[str] = []
    for turn in read_labelled(path):
        observation = turn_observation(turn.id, turn.text, turn.observed_at, subject_id="gate")
        observation = observation.model_copy(update={"speaker": turn.speaker})
        asked = gate.decide(observation) == "ask"
        if turn.facts or turn.erase is not None:
            fact_bearing += 1
            passed += asked
            if not asked:
                missed.append(turn.id)
        else:
            no_fact += 1
            skipped += not asked
    return GateScore(fact_bearing, passed, tuple(missed), no_fact, skipped)


def skip_rate(gate: TurnGate, turns: Sequence[Observation]) -> tuple[float, float]:
    """The share of ``turns`` the gate skips, and its CPU per turn in microseconds."""
    started = time.process_time()
    skipped = sum(gate.decide(o) == "skip" for o in turns)
    spent = time.process_time() - started
    return skipped / len(turns) if turns else 0.0, spent / len(turns) * 1e6 if turns else 0.0


def figures(gate: TurnGate, cascade_count: int) -> list[Figure]:
    rows: list[Figure] = []
    for split in SPLITS:
        score = score_split(gate, DATASETS / f"turns.{split}.jsonl")
        rows += [
            Figure(f"recall on fact-bearing turns ({split})", score.recall, "ratio"),
            Figure(f"fact-bearing turns skipped ({split})", ", ".join(score.missed) or "none"),
            Figure(
                f"skip rate on turns without a fact ({split})",
                score.skipped / score.no_fact if score.no_fact else 0.0,
                "ratio",
            ),
        ]
    try:
        chat = list(locomo_observations(read_turns(), 1))
    except CorpusError as exc:
        rows.append(Figure("skip rate on LoCoMo", f"not measured: {exc}"))
    else:
        rate, cpu = skip_rate(gate, chat)
        rows += [
            Figure("LoCoMo turns", len(chat), "turns"),
            Figure("skip rate on LoCoMo", rate, "ratio"),
            Figure("gate CPU per LoCoMo turn", cpu, "us"),
        ]
    config = WorkloadConfig(count=cascade_count, subjects=1_000, subject_prefix=uuid.uuid4().hex)
    generated = [w.observation() for w in generate(config, AttributeSchema.load())]
    rate, cpu = skip_rate(gate, generated)
    rows += [
        Figure("skip rate on cascade traffic", rate, "ratio"),
        Figure("gate CPU per cascade turn", cpu, "us"),
    ]
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m slotwise.loadtest.gate", description=__doc__)
    parser.add_argument("--cascade-count", type=int, default=6_000)
    parser.add_argument("--json-dir", type=Path, help="also write <json-dir>/gate.json")
    args = parser.parse_args(argv)
    rows = figures(TurnGate(AttributeSchema.load()), args.cascade_count)
    print_summary("extraction gate", rows)
    if args.json_dir is not None:
        write_result(args.json_dir / "gate.json", "gate", rows)


if __name__ == "__main__":
    main()
