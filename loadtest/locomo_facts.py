"""What the offline extractor makes of real conversations: LoCoMo through the write path's stages.

    python -m slotwise.loadtest.locomo_facts [--sample 50] [--json out.json]

Every turn of every LoCoMo conversation (``loadtest.locomo``, read where the
corpus lies, never copied into the repository) is extracted as its speaker's
own turn, and every candidate resolved in order by the real cascade over the
in-memory ports (MiniLM vectors, the offline NONE matcher), one subject per
speaker. It reports facts per turn, the share of facts in a schema slot, the
decision mix (supersessions included), and prints a seeded random sample of
the extracted facts with their turns, for labelling precision by hand.

In-process, because what is measured is the extractor and the policy on real
phrasing; the worker around them is measured by the other benchmarks. The
extractor is the one an offline worker runs (the rules with the MiniLM
attribute classifier), so ``facts written`` (the facts the cascade stored,
superseded ones included) is what :mod:`loadtest.locomo_worker` reads back
from Redis for the same code. The candidates are more: a review question the
reader asks about a slot it could not read is a candidate that becomes a
review item, not a fact, and a candidate that restates a held value is a
NOOP; both are counted apart.
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from slotwise.loadtest.locomo import Turn, read_turns
from slotwise.models.embedders import embedder_named
from slotwise.processors.cascade import Cascade
from slotwise.processors.extract import RulesExtractor
from slotwise.processors.model import stable_id
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import OfflineSlotMatcher
from slotwise.processors.testing import InMemoryFacts, InMemoryVectors
from slotwise.topics.codec import dumps
from slotwise.topics.records import CandidateFact, Command, Observation

__all__ = ["Extraction", "main", "replay"]


@dataclass(frozen=True, slots=True)
class Extraction:
    """One extracted fact and where it came from."""

    subject: str
    dia_id: str
    turn: str
    attribute: str | None
    value: str | None
    text: str
    decision: str
    valid_from: str


@dataclass(frozen=True, slots=True)
class Summary:
    turns: int
    facts: int
    questions: int
    written: int
    in_slots: int
    erase_commands: int
    decisions: dict[str, int]
    per_attribute: dict[str, int]
    extractions: tuple[Extraction, ...]

    @property
    def facts_per_turn(self) -> float:
        return self.facts / self.turns if self.turns else 0.0


def _observation(turn: Turn) -> Observation:
    subject = f"{turn.conversation}-{turn.speaker}"
    return Observation(
        schema="observation/1",
        observation_id=stable_id("locomo-facts", subject, turn.dia_id),
        subject_id=subject,
        speaker="user",
        text=turn.text,
        observed_at=turn.said_at,
        source="locomo",
    )


async def replay(turns: Sequence[Turn]) -> Summary:
    schema = AttributeSchema.load()
    embedder = embedder_named("minilm")
    extractor = RulesExtractor(schema, embedder)  # what an offline worker runs
    facts = InMemoryFacts()
    vectors = InMemoryVectors(embedder.embed)
    cascade = Cascade(
        schema,
        facts,
        vectors,
        OfflineSlotMatcher(),
        now=lambda: turns[0].said_at,
        embedding_model=embedder.model_name,
        matcher_label="offline",
    )
    decisions: Counter[str] = Counter()
    per_attribute: Counter[str] = Counter()
    extractions: list[Extraction] = []
    erase = questions = 0
    for turn in turns:
        observation = _observation(turn)
        for record in await extractor.extract(observation):
            if isinstance(record, Command):
                erase += 1
                continue
            assert isinstance(record, CandidateFact)
            resolution = await cascade.resolve(record)
            facts.apply(resolution)
            vectors.apply(resolution)
            decisions[resolution.decision.value] += 1
            if record.question is not None:
                questions += 1  # a review item for a human, not a fact
                continue
            per_attribute[record.attribute or "(free text)"] += 1
            extractions.append(
                Extraction(
                    observation.subject_id,
                    turn.dia_id,
                    turn.text,
                    record.attribute,
                    None if record.value is None else str(record.value),
                    record.text,
                    resolution.decision.value,
                    record.effective_valid_from.isoformat(),
                )
            )
    in_slots = sum(e.attribute is not None for e in extractions)
    return Summary(
        len(turns),
        len(extractions),
        questions,
        len(facts.facts),
        in_slots,
        erase,
        dict(decisions),
        dict(per_attribute),
        tuple(extractions),
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=None, help="locomo10.json (default: shared)")
    parser.add_argument("--sample", type=int, default=50, help="facts to print for labelling")
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--json", type=Path, default=None, help="write every extraction here")
    args = parser.parse_args(argv)
    turns = read_turns(args.path)
    summary = asyncio.run(replay(turns))
    print(
        f"turns {summary.turns}  facts {summary.facts} ({summary.facts_per_turn:.3f}/turn)  "
        f"in slots {summary.in_slots} ({summary.in_slots / max(summary.facts, 1):.0%})  "
        f"written {summary.written}  review questions {summary.questions}  "
        f"supersessions {summary.decisions.get('SUPERSEDE', 0)}  "
        f"erase commands {summary.erase_commands}"
    )
    print(f"decisions {dict(sorted(summary.decisions.items()))}")
    print(f"attributes {dict(Counter(summary.per_attribute).most_common())}")
    sample = random.Random(args.seed).sample(
        list(summary.extractions), min(args.sample, len(summary.extractions))
    )
    for i, item in enumerate(sample, start=1):
        print(
            f"{i:>3}. [{item.dia_id} {item.subject}] {item.turn!r}\n"
            f"     -> {item.attribute or 'free text'}={item.value!r} {item.text!r} "
            f"{item.decision} from {item.valid_from[:10]}"
        )
    if args.json is not None:
        args.json.write_bytes(
            dumps(
                [e.__dict__ if hasattr(e, "__dict__") else _plain(e) for e in summary.extractions]
            )
        )


def _plain(item: Extraction) -> dict[str, object]:
    return {name: getattr(item, name) for name in Extraction.__slots__}


if __name__ == "__main__":
    main()
