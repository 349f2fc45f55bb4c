"""A seeded workload of writes about many subjects, with the truth they should leave behind.

Each :class:`Write` is one thing a user says about themselves, in two shapes:
a chat turn (:meth:`Write.observation`, phrased so the offline rules extractor
places it) and the structured fact an importer would publish
(:meth:`Write.candidate`). The mix is what a memory store sees in production:
first mentions of schematized attributes, re-mentions (NOOP), additions to
multi-valued slots, a free-text tail the schema cannot place, and about 11 %
of writes contradicting the current value of a single-valued slot
(as in “A contradiction is only visible when memories share a key”).
A few writes arrive out of order: their ``valid_from`` is older than the
subject's previous write, so a contradiction among them must end as history.

What users say and the values they say it with are in ``vocabulary.py``; what
the writes should leave behind is folded by ``tally.py``.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import cache, lru_cache
from itertools import accumulate
from typing import Literal

from slotwise.loadtest.vocabulary import (
    EMAIL_DOMAINS,
    FIRST_NAMES,
    LAST_NAMES,
    PHRASING,
    POOLS,
    TAIL,
    TAIL_FILL,
    VOLATILITY,
    Value,
)
from slotwise.processors.dates import resolve
from slotwise.processors.model import stable_id
from slotwise.processors.schema import AttributeSchema, AttributeSpec
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import CandidateFact, Observation

__all__ = [
    "Slot",
    "Value",
    "WorkloadConfig",
    "WorkloadError",
    "Write",
    "WriteKind",
    "generate",
    "surface",
]

WriteKind = Literal["add", "contradict", "repeat", "multi_add", "free_text"]
Slot = tuple[str, str]
"""``(subject_id, attribute)``."""


class WorkloadError(SlotwiseError, ValueError):
    """The workload configuration cannot produce the requested mix."""


@dataclass(frozen=True, slots=True)
class WorkloadConfig:
    """What to generate. Rates are fractions of all writes.

    The remainder after the named rates is first mentions of schematized
    attributes; once a subject has mentioned every single-valued attribute it
    says something else instead, in the proportions of the repeat, multi-add
    and free-text rates. A contradiction rolled for a subject with nothing to
    contradict yet is owed, and paid by that subject's or another's next write,
    so the contradiction rate holds over the run.
    """

    subjects: int = 200
    count: int = 20_000
    seed: int = 42
    subject_prefix: str = "lt"
    start: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    mean_gap: timedelta = timedelta(hours=6)
    contradiction_rate: float = 0.11
    repeat_rate: float = 0.15
    multi_add_rate: float = 0.12
    free_text_rate: float = 0.22
    out_of_order_rate: float = 0.02
    source: str = "chat"

    def __post_init__(self) -> None:
        rates = (
            self.contradiction_rate,
            self.repeat_rate,
            self.multi_add_rate,
            self.free_text_rate,
            self.out_of_order_rate,
        )
        if any(not 0.0 <= r <= 1.0 for r in rates):
            raise WorkloadError("every rate must be between 0 and 1")
        if sum(rates[:4]) > 1.0:
            raise WorkloadError("contradiction, repeat, multi-add and free-text rates exceed 1")
        if self.subjects < 1 or self.count < 0:
            raise WorkloadError("need at least one subject and a non-negative count")
        if self.start.tzinfo is None or self.mean_gap <= timedelta(0):
            raise WorkloadError("start must carry a timezone and mean_gap must be positive")


SESSION_LENGTH = 10
"""Writes of one subject per chat session."""


def surface(attribute: str, value: Value) -> str:
    """The words a text uses for ``value``: what finding the value in a memory looks for."""
    if attribute == "children_count":
        return f"{value} kid" if value == 1 else f"{value} kids"
    if attribute == "plan":
        return f"{value} plan"
    return str(value)


@dataclass(frozen=True, slots=True)
class Write:
    """One thing a subject says about themselves, and what kind of write it is."""

    seq: int
    subject_id: str
    session: int
    kind: WriteKind
    attribute: str | None
    value: Value | None
    category: str | None
    statement: str
    fact_text: str
    observed_at: datetime
    valid_from: datetime
    out_of_order: bool
    seed: int
    source: str

    @property
    def observation_id(self) -> str:
        return stable_id("loadtest", str(self.seed), self.subject_id, str(self.seq), "observation")

    @property
    def candidate_id(self) -> str:
        return stable_id("loadtest", str(self.seed), self.subject_id, str(self.seq), "candidate")

    def observation(self) -> Observation:
        return Observation(
            schema="observation/1",
            observation_id=self.observation_id,
            subject_id=self.subject_id,
            session_id=f"{self.subject_id}-s{self.session}",
            speaker="user",
            text=self.statement,
            observed_at=self.observed_at,
            source=self.source,
        )

    def candidate(self) -> CandidateFact:
        return CandidateFact(
            schema="candidate/1",
            candidate_id=self.candidate_id,
            subject_id=self.subject_id,
            attribute=self.attribute,
            value=self.value,
            text=self.fact_text,
            category=self.category,
            observed_at=self.observed_at,
            valid_from=self.valid_from,
            source=self.source,
            confidence=0.9,
            importance=0.6 if self.attribute is not None else 0.4,
        )


@dataclass(slots=True)
class _Held:
    value: Value
    valid_from: datetime


@dataclass(slots=True)
class _Subject:
    subject_id: str
    first: str
    last: str
    last_observed_at: datetime | None = None
    writes: int = 0
    single: dict[str, _Held] = field(default_factory=dict)
    many: dict[str, list[Value]] = field(default_factory=dict)


def generate(config: WorkloadConfig, schema: AttributeSchema) -> Iterator[Write]:
    """The writes, in publication order, lazily (a soak of millions holds one subject table)."""
    known = [spec for spec in schema if spec.name in PHRASING]
    singles = [s for s in known if s.single_valued]
    multis = [s for s in known if not s.single_valued]
    if not singles:
        raise WorkloadError("the schema shares no single-valued attribute with this workload")
    rng = random.Random(config.seed)
    subjects = [
        _Subject(
            f"{config.subject_prefix}-user-{i:06d}", rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        )
        for i in range(config.subjects)
    ]
    step = config.mean_gap.total_seconds() / config.subjects
    clock = config.start
    debt = 0  # contradictions rolled for subjects that had nothing to contradict yet
    kinds: tuple[WriteKind, ...] = ("contradict", "repeat", "multi_add", "free_text", "add")
    rates = (
        config.contradiction_rate,
        config.repeat_rate,
        config.multi_add_rate,
        config.free_text_rate,
    )
    cumulative = tuple(accumulate((*rates, max(0.0, 1.0 - sum(rates)))))
    # A subject that has mentioned every single-valued attribute says something else
    # instead of a first mention, in the proportions of the other non-contradicting kinds.
    others, other_cumulative = kinds[1:4], tuple(accumulate(rates[1:4]))

    def fallback() -> WriteKind:
        if not other_cumulative[-1]:
            return "repeat"
        return rng.choices(others, cum_weights=other_cumulative)[0]

    for seq in range(config.count):
        clock += timedelta(seconds=max(0.001, rng.expovariate(1.0 / step)))
        subject = rng.choice(subjects)
        kind = rng.choices(kinds, cum_weights=cumulative)[0]
        if kind == "contradict" and not subject.single:
            debt += 1
            kind = "add"
        elif kind != "contradict" and debt and subject.single:
            debt -= 1
            kind = "contradict"
        late = subject.last_observed_at is not None and rng.random() < config.out_of_order_rate
        if late and subject.last_observed_at is not None:
            back = rng.uniform(60.0, 3 * config.mean_gap.total_seconds())
            observed_at = subject.last_observed_at - timedelta(seconds=back)
        else:
            observed_at = clock
            subject.last_observed_at = clock
        turn = _Turn(subject, seq, observed_at, late, config)
        write = _compose(kind, turn, singles=singles, multis=multis, rng=rng, fallback=fallback)
        subject.writes += 1
        yield write


@dataclass(frozen=True, slots=True)
class _Turn:
    """Where the write being composed sits: whose, which, when."""

    subject: _Subject
    seq: int
    observed_at: datetime
    late: bool
    config: WorkloadConfig

    def write(
        self,
        kind: WriteKind,
        spec: AttributeSpec | None,
        value: Value | None,
        said: tuple[str, dict[str, str]],
        fact: str,
        *,
        category: str | None = None,
    ) -> Write:
        template, fill = said
        statement = template.format_map(fill)
        return Write(
            seq=self.seq,
            subject_id=self.subject.subject_id,
            session=self.subject.writes // SESSION_LENGTH,
            kind=kind,
            attribute=None if spec is None else spec.name,
            value=value,
            category=category if spec is None else spec.category,
            statement=statement,
            fact_text=fact.format_map(fill),
            observed_at=self.observed_at,
            valid_from=_valid_from(template, statement, self.observed_at),
            out_of_order=self.late,
            seed=self.config.seed,
            source=self.config.source,
        )

    def plain(self, kind: WriteKind, spec: AttributeSpec, value: Value) -> Write:
        text = PHRASING[spec.name]
        fill = {"v": surface(spec.name, value)}
        return self.write(kind, spec, value, (text.says, fill), text.fact)

    def hold(self, kind: WriteKind, spec: AttributeSpec, value: Value, old: Value | None) -> Write:
        """A write to a single-valued slot; the slot keeps the value with the latest valid_from."""
        if kind == "contradict" and old is not None:
            text = PHRASING[spec.name]
            fill = {"v": surface(spec.name, value), "old": surface(spec.name, old)}
            write = self.write(kind, spec, value, (text.changes, fill), text.fact)
        else:
            write = self.plain(kind, spec, value)
        held = self.subject.single.get(spec.name)
        if held is None or write.valid_from >= held.valid_from:
            self.subject.single[spec.name] = _Held(value, write.valid_from)
        return write


@cache
def _dated(template: str) -> bool:
    """Whether a template carries a date expression (most do not: skip the date parser)."""
    neutral = dict.fromkeys(("v", "old"), "it") | {k: v[0] for k, v in TAIL_FILL.items()}
    return resolve(template.format_map(neutral), datetime(2026, 1, 1, tzinfo=UTC)) is not None


@lru_cache(maxsize=65_536)
def _resolved(statement: str, day: date) -> datetime | None:
    return resolve(statement, datetime.combine(day, time(), UTC))


def _valid_from(template: str, statement: str, observed_at: datetime) -> datetime:
    """What the extractor resolves: "I start at Stripe on Monday" holds from that Monday."""
    if not _dated(template):
        return observed_at
    return _resolved(statement, observed_at.astimezone(UTC).date()) or observed_at


def _compose(
    kind: WriteKind,
    turn: _Turn,
    *,
    singles: Sequence[AttributeSpec],
    multis: Sequence[AttributeSpec],
    rng: random.Random,
    fallback: Callable[[], WriteKind],
) -> Write:
    subject = turn.subject
    if kind == "add":
        empty = [s for s in singles if s.name not in subject.single]
        if empty:
            spec = rng.choice(empty)
            return turn.hold("add", spec, _draw(spec.name, subject, rng, exclude=None), old=None)
        kind = fallback()
    if kind == "contradict":
        filled = [s for s in singles if s.name in subject.single]
        spec = rng.choices(filled, [VOLATILITY.get(s.name, 1.0) for s in filled])[0]
        old = subject.single[spec.name].value
        return turn.hold("contradict", spec, _draw(spec.name, subject, rng, exclude=old), old)
    if kind == "multi_add":
        open_multis = [s for s in multis if _unused(s.name, subject)]
        if open_multis:
            spec = rng.choice(open_multis)
            value = rng.choice(_unused(spec.name, subject))
            subject.many.setdefault(spec.name, []).append(value)
            return turn.plain("multi_add", spec, value)
        kind = "repeat"
    if kind == "repeat":
        mentioned = [(s, subject.single[s.name].value) for s in singles if s.name in subject.single]
        mentioned += [(s, v) for s in multis for v in subject.many.get(s.name, ())]
        if mentioned:
            spec, value = rng.choice(mentioned)
            return turn.plain("repeat", spec, value)
        spec = rng.choice(singles)
        return turn.hold("add", spec, _draw(spec.name, subject, rng, exclude=None), old=None)
    said, fact, category = rng.choice(TAIL)
    fill = {k: rng.choice(v) for k, v in TAIL_FILL.items()}
    return turn.write("free_text", None, None, (said, fill), fact, category=category)


def _unused(attribute: str, subject: _Subject) -> list[Value]:
    used = subject.many.get(attribute, [])
    return [v for v in POOLS[attribute] if v not in used]


def _draw(attribute: str, subject: _Subject, rng: random.Random, exclude: Value | None) -> Value:
    while True:
        value = _fresh(attribute, subject, rng)
        if value != exclude:
            return value


def _fresh(attribute: str, subject: _Subject, rng: random.Random) -> Value:
    if attribute == "name":
        subject.first, subject.last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        return f"{subject.first} {subject.last}"
    if attribute == "email":
        local = _ascii(f"{subject.first}.{subject.last}").lower()
        return f"{local}{rng.randrange(100)}@{rng.choice(EMAIL_DOMAINS)}"
    if attribute == "phone":
        return f"+1555{rng.randrange(10_000):04d}"  # E.164, as the extractor normalises it
    return rng.choice(POOLS[attribute])


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
