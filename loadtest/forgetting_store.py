"""The forgetting benchmark's world: a store written over two years, and who reads what when.

*The store.* The loadtest generator's writes (``generator.py``: first mentions,
re-mentions, contradictions, many-valued additions, a free-text tail, out-of-
order arrivals), spread over ``span_days`` ending at the pass, are resolved
in-process by the worker's own cascade and policy (``processors/cascade.py``
over the in-memory ports, the offline matcher, a word-hash embedding for the
vector path) until the store holds ``facts`` facts. Each fact is recorded at
its write's time, as the worker would have recorded it then.

*The reads.* A fact is read while it is current, at a Poisson rate that starts
at ``base_rate`` · interest and halves every *true* half-life — its category's
vocabulary half-life times a log-normal factor (sigma 0.5), so the vocabulary is
right on average and wrong per fact; identity never decays; interest is the
fact's importance times a log-normal factor of mean 1 (sigma ``interest_sigma``,
1.5), so a few facts are read a lot and most rarely — a conversation retrieves a
handful of a subject's facts, mostly the same ones. Reads before the pass become
the access counters; reads in the ``horizon_days`` after it are the test: were
their facts still hot?
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.cascade import Cascade
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import OfflineSlotMatcher
from slotwise.processors.testing import InMemoryFacts, InMemoryVectors
from slotwise.topics.records import Fact

__all__ = ["FREE_TEXT_HALF_LIVES", "Read", "WorldConfig", "build_store", "reads_of"]

# The generator's free-text categories, which the vocabulary has no attribute for.
FREE_TEXT_HALF_LIVES: dict[str, float | None] = {"travel": 90.0, "sport": 180.0, "hobby": 180.0}
_DAY_S = 86_400.0


@dataclass(frozen=True, slots=True)
class WorldConfig:
    facts: int = 100_000
    subjects: int = 1_000
    seed: int = 7
    span_days: float = 730.0
    horizon_days: float = 30.0
    base_rate: float = 0.06  # reads per day of a fresh fact of importance 1 and mean interest
    interest_sigma: float = 1.5  # log-normal spread of interest across facts, mean 1
    model: str = "all-MiniLM-L6-v2"


@dataclass(frozen=True, slots=True)
class Read:
    at: datetime
    subject_id: str
    fact_id: str


def _words(texts: Sequence[str]) -> list[list[float]]:
    rows = []
    for text in texts:
        row = [0.0] * 64
        for word in re.findall(r"\w+", text.lower()):
            row[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % 64] += 1.0
        norm = math.sqrt(sum(v * v for v in row)) or 1.0
        rows.append([v / norm for v in row])
    return rows


def build_store(config: WorldConfig, schema: AttributeSchema, *, end: datetime) -> list[Fact]:
    """The facts the generator's writes leave, resolved as the worker resolves them, with
    their times mapped onto ``[end - span_days, end]``."""
    # Facts per write fall as subjects run out of new things to say: ask for plenty.
    count = int(config.facts * 3)
    start = datetime(2020, 1, 1, tzinfo=UTC)
    workload = WorkloadConfig(
        subjects=config.subjects,
        count=count,
        seed=config.seed,
        subject_prefix="fg",
        start=start,
        mean_gap=timedelta(days=1),
    )
    facts = InMemoryFacts()
    vectors = InMemoryVectors(_words)
    clock: list[datetime] = [start]
    cascade = Cascade(
        schema,
        facts,
        vectors,
        OfflineSlotMatcher(0.85),
        now=lambda: clock[0],
        embedding_model=config.model,
        matcher_label="offline",
    )

    async def resolve_all() -> None:
        for write in generate(workload, schema):
            if len(facts.facts) >= config.facts:
                return
            clock[0] = max(clock[0], write.observed_at)
            resolution = await cascade.resolve(write.candidate())
            facts.apply(resolution)
            vectors.apply(resolution)

    asyncio.run(resolve_all())
    first = min(f.recorded_at for f in facts.facts.values())
    scale = config.span_days * _DAY_S / max(1.0, (clock[0] - first).total_seconds())

    def moved(moment: datetime | None) -> datetime | None:
        if moment is None:
            return None
        return end - timedelta(seconds=(clock[0] - moment).total_seconds() * scale)

    return [
        f.model_copy(
            update={
                name: moved(getattr(f, name))
                for name in (
                    "valid_from",
                    "valid_to",
                    "observed_at",
                    "recorded_at",
                    "last_verified",
                )
            }
        )
        for f in facts.facts.values()
    ]


@dataclass
class _Truth:
    schema: AttributeSchema
    rng: random.Random
    halves: dict[str, float | None] = field(default_factory=dict)

    def half_life(self, fact: Fact) -> float | None:
        spec = self.schema.get(fact.attribute)
        nominal = (
            spec.half_life_days
            if spec is not None
            else FREE_TEXT_HALF_LIVES.get(fact.category or "", 365.0)
        )
        return None if nominal is None else nominal * math.exp(self.rng.gauss(0.0, 0.5))


def reads_of(
    facts: Sequence[Fact], config: WorldConfig, schema: AttributeSchema, *, end: datetime
) -> Iterator[Read]:
    """Every read of the trace, pass time ``end`` to ``end + horizon``, in no order."""
    rng = random.Random(config.seed * 7919 + 1)
    truth = _Truth(schema, rng)
    recorded = {f.fact_id: f.recorded_at for f in facts}
    stop = end + timedelta(days=config.horizon_days)
    for fact in sorted(facts, key=lambda f: f.fact_id):
        if fact.status == "history":
            continue  # never current: nothing ever read it
        until = stop
        if fact.superseded_by is not None and fact.superseded_by in recorded:
            until = min(stop, recorded[fact.superseded_by])
        born = fact.recorded_at
        if until <= born:
            continue
        sigma = config.interest_sigma
        interest = fact.importance * math.exp(rng.gauss(-sigma * sigma / 2, sigma))
        half = truth.half_life(fact)
        for offset in _read_times(
            rng, config.base_rate * interest, half, (until - born) / timedelta(days=1)
        ):
            yield Read(born + timedelta(days=offset), fact.subject_id, fact.fact_id)


def _read_times(
    rng: random.Random, rate: float, half_life: float | None, span: float
) -> list[float]:
    """Days after the fact's birth of its reads: a Poisson process of rate
    ``rate · 0.5^(t / half_life)`` over ``[0, span]`` (inverse-CDF sampling)."""
    if rate <= 0 or span <= 0:
        return []
    if half_life is None:
        count = _poisson(rng, rate * span)
        return [rng.uniform(0, span) for _ in range(count)]
    decay = math.log(2) / half_life
    mass = 1.0 - math.exp(-decay * span)
    count = _poisson(rng, rate / decay * mass)
    return [-math.log(1.0 - rng.random() * mass) / decay for _ in range(count)]


def _poisson(rng: random.Random, mean: float) -> int:
    if mean <= 0:
        return 0
    if mean > 50:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k
