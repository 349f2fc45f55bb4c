"""The consolidation pass: ask about what the write path never compared, publish findings.

``slotwise consolidate [--subject S | --all] [--max-calls N]`` (and the same
on a schedule, ``--every SECONDS``). For each subject, outside the log:

1. read the subject's facts (every status) and embed their texts;
2. plan the questions (``processors.consolidation.plan``): the pairs of
   current facts in one category the write-time top-K never compared, that no
   earlier pass asked about and no human rejected;
3. ask the slot matcher, as the write path asks, within the budget: at most
   ``max_calls_per_subject`` calls per subject and ``max_calls`` per pass
   (what is left over is reported as deferred and asked next pass);
4. re-derive the facts flagged ``needs_revalidation`` (the model's verdict, or
   a review item offline);
5. publish one ``consolidate`` command per subject with what it found, the
   fingerprints of the facts it decided against, and the pairs it compared.

Nothing here writes subject state. The command is applied at its place in the
subject's log (``streams/commands/consolidate.py``), where a finding whose
facts changed meanwhile is dropped, so writes that arrive during the pass are
never lost, and a replay of the command decides nothing twice. A pass killed
half-way leaves only commands that were whole; running it again asks only
about what is still open.

Offline (no API key) the matcher answers NONE and sends very close pairs
(cosine ≥ ``SLOTWISE_REVIEW_SIMILARITY``) to review; it costs no calls and
catches no contradiction on its own. Flagged derived facts go to review.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from slotwise.processors.change import fingerprint
from slotwise.processors.consolidation import Finding, Question, plan, revalidation_review_id
from slotwise.processors.model import stable_id
from slotwise.processors.pairs import as_candidate
from slotwise.processors.ports import Embedder, SlotMatcher
from slotwise.processors.provenance import Rederiver, heads
from slotwise.sinks.redis.provenance import RedisProvenance
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.codec import dumps
from slotwise.topics.records import Command, Fact

__all__ = ["Budget", "ConsolidationPass", "PassConfig", "PassReport", "SubjectReport"]


@dataclass(frozen=True, slots=True)
class PassConfig:
    top_k: int = 5
    floor: float = 0.15
    max_calls: int | None = None
    max_calls_per_subject: int = 20
    # The small-model price per slot-match call that “A contradiction is only visible when
    # memories share a key” quotes; the report's estimate only.
    price_per_call: float = 0.0003
    # Whether the matcher is a model (its questions cost calls) or the offline one.
    model: bool = True
    concurrency: int = 4


@dataclass
class Budget:
    """Calls left for the pass; checked and spent without an await in between."""

    left: int | None

    def take(self) -> bool:
        if self.left is None:
            return True
        if self.left <= 0:
            return False
        self.left -= 1
        return True


@dataclass
class SubjectReport:
    subject_id: str
    facts: int = 0
    questions: int = 0
    calls: int = 0
    pairs_open: int = 0
    pairs_seen_at_write: int = 0
    pairs_known: int = 0
    matches: int = 0
    reviews: int = 0
    revalidated: int = 0
    deferred: int = 0
    errors: int = 0
    command_id: str | None = None


@dataclass
class PassReport:
    as_of: datetime
    price_per_call: float
    subjects: list[SubjectReport] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(int(getattr(s, name)) for s in self.subjects)

    @property
    def cost(self) -> float:
        return self.total("calls") * self.price_per_call

    def summary(self) -> dict[str, object]:
        touched = len(self.subjects) or 1
        names = (
            "questions", "calls", "pairs_open", "pairs_seen_at_write", "pairs_known",
            "matches", "reviews", "revalidated", "deferred", "errors",
        )  # fmt: skip
        body: dict[str, object] = {"subjects": len(self.subjects)}
        body.update({name: self.total(name) for name in names})
        body["calls_per_subject"] = round(self.total("calls") / touched, 2)
        body["commands"] = sum(1 for s in self.subjects if s.command_id)
        body["estimated_usd"] = round(self.cost, 4)
        return body


Publish = Callable[[Command], Awaitable[None]]


class ConsolidationPass:
    """One deployment's pass; every client arrives from outside."""

    def __init__(
        self,
        store: RedisStore,
        *,
        provenance: RedisProvenance,
        reviews: RedisReviews,
        embedder: Embedder,
        matcher: SlotMatcher,
        rederiver: Rederiver,
        publish: Publish,
        config: PassConfig,
    ) -> None:
        self._store = store
        self._provenance = provenance
        self._reviews = reviews
        self._embedder = embedder
        self._matcher = matcher
        self._rederiver = rederiver
        self._publish = publish
        self._config = config

    async def run(
        self, subjects: AsyncIterable[str] | Iterable[str], *, as_of: datetime
    ) -> PassReport:
        report = PassReport(as_of, self._config.price_per_call)
        budget = Budget(self._config.max_calls)
        gate = asyncio.Semaphore(self._config.concurrency)

        async def one(subject: str) -> None:
            async with gate:
                report.subjects.append(await self.subject(subject, as_of=as_of, budget=budget))

        tasks: list[asyncio.Task[None]] = []
        if isinstance(subjects, AsyncIterable):
            async for subject in subjects:
                tasks.append(asyncio.create_task(one(subject)))
        else:
            tasks = [asyncio.create_task(one(subject)) for subject in subjects]
        await asyncio.gather(*tasks)
        report.subjects.sort(key=lambda s: s.subject_id)
        return report

    async def subject(self, subject_id: str, *, as_of: datetime, budget: Budget) -> SubjectReport:
        report = SubjectReport(subject_id)
        facts = await self._store.facts(subject_id, include_history=True)
        report.facts = len(facts)
        current = [f for f in facts if f.status == "current"]
        if not current:
            return report
        known = await self._provenance.compared(subject_id) | await self._reviews.rejections(
            subject_id
        )
        texts = sorted({f.text for f in facts})
        embedded = dict(
            zip(texts, await asyncio.to_thread(self._embedder.embed, texts), strict=True)
        )
        vectors = {f.fact_id: embedded[f.text] for f in facts}
        planned = plan(
            facts, vectors, top_k=self._config.top_k, floor=self._config.floor, known=known
        )
        report.pairs_open, report.pairs_seen_at_write = planned.pairs, planned.seen_at_write
        report.pairs_known = planned.known
        findings: list[Finding] = []
        compared: list[tuple[str, str]] = []
        for question in planned.questions:
            if report.calls >= self._config.max_calls_per_subject or (
                self._config.model and not budget.take()
            ):
                report.deferred += 1
                continue
            report.questions += 1
            report.calls += 1 if self._config.model else 0
            if not await self._ask(question, findings, compared):
                report.errors += 1
                break
        await self._revalidate(current, {f.fact_id: f for f in facts}, findings, report, budget)
        report.matches = sum(1 for f in findings if f.kind == "match")
        report.reviews = sum(1 for f in findings if f.kind in ("review", "revalidate"))
        if findings or compared:
            command = _command(subject_id, as_of, findings, compared, report.calls)
            await self._publish(command)
            report.command_id = command.command_id
        return report

    async def _ask(
        self, question: Question, findings: list[Finding], compared: list[tuple[str, str]]
    ) -> bool:
        """One slot-match call; False when the model could not be asked."""
        fact, neighbours = question.fact, question.neighbours
        answer = await self._matcher.match(as_candidate(fact), neighbours)
        if answer.error is not None:
            return False
        pairs = [(n.fact.fact_id, fact.fact_id) for n in neighbours]
        if answer.index is not None and 0 <= answer.index < len(neighbours):
            hit = neighbours[answer.index]
            findings.append(
                Finding(
                    "match",
                    new=fact.fact_id,
                    old=hit.fact.fact_id,
                    prints=(fingerprint(fact), fingerprint(hit.fact)),
                    why=f"{fact.text!r} fills the slot of {hit.fact.text!r} "
                    f"(cosine {hit.similarity:.2f})",
                )
            )
            return True
        if answer.review_reason is not None:
            best = neighbours[0]
            findings.append(
                Finding(
                    "review",
                    new=fact.fact_id,
                    old=best.fact.fact_id,
                    prints=(fingerprint(fact), fingerprint(best.fact)),
                    why=answer.review_reason,
                )
            )
            pairs = pairs[1:]
        compared.extend(pairs)
        return True

    async def _revalidate(
        self,
        current: list[Fact],
        facts: dict[str, Fact],
        findings: list[Finding],
        report: SubjectReport,
        budget: Budget,
    ) -> None:
        for derived in sorted(
            (f for f in current if f.needs_revalidation), key=lambda f: f.fact_id
        ):
            if await self._reviews.get(derived.subject_id, revalidation_review_id(derived)):
                continue  # a human has it (or decided it) already
            if self._config.model and not budget.take():
                report.deferred += 1
                continue
            sources = heads(facts, derived.derived_from)
            verdict = await self._rederiver.rederive(derived, sources)
            report.calls += 1 if self._config.model else 0
            if verdict.error is not None:
                report.errors += 1
                continue
            kind = {"keep": "keep", "rewrite": "rewrite", "unsure": "revalidate"}[verdict.verdict]
            findings.append(
                Finding(
                    kind,  # type: ignore[arg-type]
                    new=derived.fact_id,
                    prints=(fingerprint(derived),),
                    why=verdict.raw,
                    text=verdict.text,
                    sources=tuple(s.fact_id for s in sources),
                )
            )
            report.revalidated += 1


def _command(
    subject_id: str,
    as_of: datetime,
    findings: list[Finding],
    compared: list[tuple[str, str]],
    calls: int,
) -> Command:
    params: dict[str, object] = {
        "findings": [f.dump() for f in findings],
        "compared": [list(pair) for pair in compared],
        "calls": calls,
    }
    digest = hashlib.sha256(dumps(params)).hexdigest()
    ids = sorted({i for f in findings for i in f.ids()} | {i for p in compared for i in p})
    return Command(
        # The content decides the id: the same pass over the same state publishes the
        # same command, which the worker applies once.
        command_id=stable_id("consolidate", subject_id, as_of.isoformat(), digest),
        subject_id=subject_id,
        command="consolidate",
        issued_at=as_of,
        fact_ids=tuple(ids),
        reason=f"consolidation pass as of {as_of.isoformat()}",
        params=params,
    )
