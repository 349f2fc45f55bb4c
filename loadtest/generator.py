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

:class:`Tally` folds the writes into the expected final state: for every
single-valued slot the value with the latest ``valid_from`` (ties: the later
write), and every value ever stated, which is what judges whether a store
holds two contradictory current memories for one slot.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import cache, lru_cache
from itertools import accumulate
from typing import Literal

from slotwise.processors.dates import resolve
from slotwise.processors.model import stable_id
from slotwise.processors.schema import AttributeSchema, AttributeSpec
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import CandidateFact, Observation

__all__ = [
    "Slot",
    "Tally",
    "WorkloadConfig",
    "WorkloadError",
    "Write",
    "WriteKind",
    "contradictory_slots",
    "generate",
    "stated_values",
    "surface",
    "tallied",
]

WriteKind = Literal["add", "contradict", "repeat", "multi_add", "free_text"]
Value = str | int
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


@dataclass(frozen=True, slots=True)
class _Phrasing:
    """How a user says a value, how they say it changed, and the fact as stored."""

    says: str
    changes: str
    fact: str


# The user's words follow the patterns of the rules extractor (processors/extract.py).
_PHRASING: dict[str, _Phrasing] = {
    "name": _Phrasing("My name is {v}.", "My name is {v}.", "User's name is {v}."),
    "preferred_name": _Phrasing(
        "Please call me {v}.", "Please call me {v} from now on.", "User prefers to be called {v}."
    ),
    "email": _Phrasing("My email is {v}.", "My new email is {v}.", "User's email is {v}."),
    "phone": _Phrasing(
        "My phone number is {v}.", "My new phone number is {v}.", "User's phone number is {v}."
    ),
    "home_city": _Phrasing("I live in {v}.", "I moved to {v}.", "User lives in {v}."),
    "home_country": _Phrasing("I live in {v}.", "I moved to {v}.", "User lives in {v}."),
    "employer": _Phrasing("I work at {v}.", "I start at {v} on Monday.", "User works at {v}."),
    "job_title": _Phrasing(
        "I work as a {v}.", "I started a new job as a {v}.", "User works as a {v}."
    ),
    "plan": _Phrasing("I'm on the {v}.", "I switched to the {v}.", "User is on the {v}."),
    "diet": _Phrasing("I'm {v}.", "I'm {v} now.", "User is {v}."),
    "allergies": _Phrasing(
        "I'm allergic to {v}.", "I'm allergic to {v}.", "User is allergic to {v}."
    ),
    "languages": _Phrasing("I speak {v}.", "I speak {v}.", "User speaks {v}."),
    "pets": _Phrasing("I have a {v}.", "I have a {v}.", "User has a {v}."),
    "children_count": _Phrasing("I have {v}.", "I have {v} now.", "User has {v}."),
    "relationship_status": _Phrasing("I'm {v}.", "I'm {v} now.", "User is {v}."),
    "timezone": _Phrasing("My timezone is {v}.", "My timezone is {v}.", "User's timezone is {v}."),
    "database": _Phrasing(
        "Our main database is {v}.",
        "We switched our database from {old} to {v}.",
        "User's main database is {v}.",
    ),
}

# Pools are disjoint as whole words, so a value found in a text names one slot.
_FIRST = (
    "Maria",
    "João",
    "Lena",
    "Tomás",
    "Priya",
    "Kenji",
    "Amara",
    "Lucas",
    "Sofia",
    "Noah",
    "Elif",
    "Mateo",
    "Zara",
    "Ivan",
    "Chloe",
    "Omar",
    "Hana",
    "Felix",
)
_LAST = (
    "Silva",
    "Costa",
    "Novak",
    "Okafor",
    "Tanaka",
    "Müller",
    "Haddad",
    "Larsen",
    "Moreau",
    "Rossi",
    "Kowalski",
    "Nguyen",
    "Santos",
    "Fischer",
    "Reyes",
)
_DOMAINS = ("example.com", "mail.example.org", "inbox.example.net")
_POOLS: dict[str, tuple[Value, ...]] = {
    "preferred_name": ("Ace", "Bee", "Kit", "Sunny", "Jojo", "Pip", "Moss", "Wren"),
    "home_city": (
        "Lisbon",
        "Porto",
        "Berlin",
        "Munich",
        "Toronto",
        "Austin",
        "Denver",
        "Madrid",
        "Osaka",
        "Curitiba",
    ),
    "home_country": ("Portugal", "Germany", "Canada", "Spain", "Japan", "Brazil", "Ireland"),
    "employer": (
        "Stripe",
        "Datadog",
        "Shopify",
        "Atlassian",
        "Spotify",
        "Canva",
        "Zalando",
        "Klarna",
        "Twilio",
        "Figma",
    ),
    "job_title": (
        "data engineer",
        "product manager",
        "nurse",
        "teacher",
        "software architect",
        "pharmacist",
        "backend developer",
        "designer",
    ),
    "plan": ("Free", "Pro", "Team", "Enterprise"),
    "diet": ("vegetarian", "vegan", "pescatarian", "keto"),
    "allergies": ("peanuts", "shellfish", "penicillin", "pollen", "latex", "sesame"),
    "languages": (
        "Portuguese",
        "German",
        "French",
        "Spanish",
        "Japanese",
        "Italian",
        "Mandarin",
        "Hindi",
    ),
    "pets": ("dog", "cat", "parrot", "rabbit", "tortoise", "hamster"),
    "children_count": (1, 2, 3, 4),
    "relationship_status": ("single", "married", "engaged", "divorced"),
    "timezone": ("UTC-08:00", "UTC-05:00", "UTC+00:00", "UTC+01:00", "UTC+05:30", "UTC+09:00"),
    "database": ("Postgres", "MySQL", "MongoDB", "Cassandra", "DynamoDB", "CockroachDB"),
}
# How often each single-valued attribute changes relative to the others: people
# move and change jobs far more often than they change their name.
_VOLATILITY: dict[str, float] = {
    "name": 0.2,
    "preferred_name": 0.5,
    "email": 1.0,
    "phone": 1.0,
    "home_city": 3.0,
    "home_country": 1.0,
    "employer": 3.0,
    "job_title": 2.0,
    "plan": 2.0,
    "diet": 1.0,
    "children_count": 0.5,
    "relationship_status": 1.0,
    "timezone": 1.0,
    "database": 2.0,
}
# The free-text tail: (what the user says, the fact, category). No pool value occurs in them.
_TAIL: tuple[tuple[str, str, str], ...] = (
    ("I visited {place} in {month}.", "User visited {place} in {month}.", "travel"),
    ("I ran a marathon last year.", "User ran a marathon last year.", "sport"),
    ("I went hiking in {region} last weekend.", "User went hiking in {region}.", "travel"),
    ("I finished reading {book} last week.", "User finished reading {book}.", "hobby"),
    ("I started learning the {instrument}.", "User is learning the {instrument}.", "hobby"),
    ("I baked sourdough bread for the first time.", "User baked sourdough bread.", "hobby"),
    ("I watched {film} twice this month.", "User watched {film} twice.", "hobby"),
)
_TAIL_FILL: dict[str, tuple[str, ...]] = {
    "place": ("Kyoto", "Reykjavik", "Marrakesh", "Cusco", "Hanoi", "Tbilisi", "Oaxaca"),
    "month": ("January", "March", "May", "July", "September", "November"),
    "region": ("the Dolomites", "Patagonia", "the Highlands", "the Alps"),
    "book": ("Dune", "Middlemarch", "The Overstory", "Piranesi"),
    "instrument": ("cello", "ukulele", "drums", "piano"),
    "film": ("Paddington 2", "Spirited Away", "Arrival"),
}
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
    known = [spec for spec in schema if spec.name in _PHRASING]
    singles = [s for s in known if s.single_valued]
    multis = [s for s in known if not s.single_valued]
    if not singles:
        raise WorkloadError("the schema shares no single-valued attribute with this workload")
    rng = random.Random(config.seed)
    subjects = [
        _Subject(f"{config.subject_prefix}-user-{i:06d}", rng.choice(_FIRST), rng.choice(_LAST))
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
        text = _PHRASING[spec.name]
        fill = {"v": surface(spec.name, value)}
        return self.write(kind, spec, value, (text.says, fill), text.fact)

    def hold(self, kind: WriteKind, spec: AttributeSpec, value: Value, old: Value | None) -> Write:
        """A write to a single-valued slot; the slot keeps the value with the latest valid_from."""
        if kind == "contradict" and old is not None:
            text = _PHRASING[spec.name]
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
    neutral = dict.fromkeys(("v", "old"), "it") | {k: v[0] for k, v in _TAIL_FILL.items()}
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
        spec = rng.choices(filled, [_VOLATILITY.get(s.name, 1.0) for s in filled])[0]
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
    said, fact, category = rng.choice(_TAIL)
    fill = {k: rng.choice(v) for k, v in _TAIL_FILL.items()}
    return turn.write("free_text", None, None, (said, fill), fact, category=category)


def _unused(attribute: str, subject: _Subject) -> list[Value]:
    used = subject.many.get(attribute, [])
    return [v for v in _POOLS[attribute] if v not in used]


def _draw(attribute: str, subject: _Subject, rng: random.Random, exclude: Value | None) -> Value:
    while True:
        value = _fresh(attribute, subject, rng)
        if value != exclude:
            return value


def _fresh(attribute: str, subject: _Subject, rng: random.Random) -> Value:
    if attribute == "name":
        subject.first, subject.last = rng.choice(_FIRST), rng.choice(_LAST)
        return f"{subject.first} {subject.last}"
    if attribute == "email":
        local = _ascii(f"{subject.first}.{subject.last}").lower()
        return f"{local}{rng.randrange(100)}@{rng.choice(_DOMAINS)}"
    if attribute == "phone":
        return f"+1555{rng.randrange(10_000):04d}"  # E.164, as the extractor normalises it
    return rng.choice(_POOLS[attribute])


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


@dataclass(slots=True)
class Tally:
    """The expected end state of a workload, folded from its writes in publication order."""

    kinds: Counter[str] = field(default_factory=Counter)
    out_of_order: int = 0
    writes: int = 0
    current: dict[Slot, Value] = field(default_factory=dict)
    stated: dict[Slot, set[Value]] = field(default_factory=dict)
    members: dict[Slot, set[Value]] = field(default_factory=dict)
    _since: dict[Slot, datetime] = field(default_factory=dict)

    def record(self, write: Write, schema: AttributeSchema) -> None:
        self.writes += 1
        self.kinds[write.kind] += 1
        self.out_of_order += write.out_of_order
        spec = schema.get(write.attribute)
        if spec is None or write.value is None:
            return
        slot = (write.subject_id, spec.name)
        if not spec.single_valued:
            self.members.setdefault(slot, set()).add(write.value)
            return
        self.stated.setdefault(slot, set()).add(write.value)
        since = self._since.get(slot)
        if since is None or write.valid_from >= since:  # a tie goes to the later write
            self._since[slot] = write.valid_from
            self.current[slot] = write.value

    def mix(self) -> dict[str, float]:
        """Fraction of writes of each kind, plus the out-of-order fraction."""
        total = max(1, self.writes)
        shares = {kind: self.kinds[kind] / total for kind in sorted(self.kinds)}
        shares["out_of_order"] = self.out_of_order / total
        return shares


def tallied(writes: Iterable[Write], schema: AttributeSchema, tally: Tally) -> Iterator[Write]:
    """Pass the writes through, recording each in ``tally`` (one pass for a soak)."""
    for write in writes:
        tally.record(write, schema)
        yield write


def stated_values(text: str, attribute: str, values: Iterable[Value]) -> set[Value]:
    """Which of ``values`` of ``attribute`` the text states, as whole words, ignoring case."""
    found: set[Value] = set()
    for value in values:
        pattern = rf"(?<!\w){re.escape(surface(attribute, value))}(?!\w)"
        if re.search(pattern, text, re.IGNORECASE):
            found.add(value)
    return found


def contradictory_slots(memories: Mapping[str, Sequence[str]], tally: Tally) -> list[Slot]:
    """Single-valued slots for which a subject's current memories state two or more values.

    ``memories`` maps a subject to the texts it currently holds as true. A value
    counts for a slot if it is one the workload ever stated for that slot.
    """
    found: list[Slot] = []
    for slot, values in sorted(tally.stated.items()):
        if len(values) < 2:
            continue
        subject, attribute = slot
        said: set[Value] = set()
        for text in memories.get(subject, ()):
            said |= stated_values(text, attribute, values)
        if len(said) >= 2:
            found.append(slot)
    return found
