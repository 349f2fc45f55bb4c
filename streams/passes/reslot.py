"""Re-slotting: ``slotwise reslot --attribute A [--dry-run]``, and the ``reslot`` command.

When a vocabulary version adds an attribute (``SLOTWISE_VOCABULARY`` names
the file the worker and the pass load), the free-text facts stored before may
already state it. The pass walks every subject's current free-text facts,
asks the slot filler (the model, or the rules extractor offline) whether each
fills the attribute, and publishes one ``reslot`` command per fact that does
or may (ambiguous); ``--dry-run`` publishes nothing and reports what it would
do, and what it cost to find out. Cost is reported as the seed does: model
calls, an estimate in dollars, and the ambiguous share — the part a person
must review, which no dollar figure includes.

The command is applied at its place in the subject's log
(:class:`~slotwise.streams.commands.reslot.ReslotHandler`, through the lifecycle
:class:`~slotwise.streams.commands.apply.Applier`): a fact that changed since the
pass read it is dropped; a match moves the fact into the slot in place, by
the policy against what the slot holds (``processors.pairs.place``); an
ambiguous answer opens a review item.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from slotwise.processors.reslot import (
    Fill,
    SlotFiller,
    reslot_command,
    reslot_review_id,
    walkable,
)
from slotwise.processors.schema import AttributeSpec
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.records import Command, Fact

__all__ = ["ReslotPass", "ReslotReport"]


@dataclass
class ReslotReport:
    attribute: str
    dry_run: bool
    price_per_call: float
    model: bool
    subjects: int = 0
    walked: int = 0
    calls: int = 0
    fills: int = 0
    ambiguous: int = 0
    errors: int = 0
    skipped: int = 0
    commands: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        asked = self.walked - self.errors
        return {
            "attribute": self.attribute,
            "dry_run": self.dry_run,
            "subjects": self.subjects,
            "facts_walked": self.walked,
            "model_calls": self.calls,
            "estimated_usd": round(self.calls * self.price_per_call, 4),
            "fills": self.fills,
            "ambiguous": self.ambiguous,
            "ambiguous_share": round(self.ambiguous / asked, 4) if asked else 0.0,
            "errors": self.errors,
            "skipped_already_reviewed": self.skipped,
            "commands": len(self.commands),
        }


Publish = Callable[[Command], Awaitable[None]]


class ReslotPass:
    def __init__(
        self,
        store: RedisStore,
        reviews: RedisReviews,
        filler: SlotFiller,
        publish: Publish,
        *,
        vocabulary: str,
        model: bool,
        price_per_call: float = 0.0003,
        concurrency: int = 8,
    ) -> None:
        self._store = store
        self._reviews = reviews
        self._filler = filler
        self._publish = publish
        self._vocabulary = vocabulary
        self._model = model
        self._price = price_per_call
        self._gate = asyncio.Semaphore(concurrency)

    async def run(
        self,
        spec: AttributeSpec,
        subjects: AsyncIterable[str] | Iterable[str],
        *,
        as_of: datetime,
        dry_run: bool = False,
    ) -> ReslotReport:
        report = ReslotReport(spec.name, dry_run, self._price, self._model)
        names = (
            [s async for s in subjects] if isinstance(subjects, AsyncIterable) else list(subjects)
        )
        for subject in sorted(names):
            report.subjects += 1
            await self._subject(subject, spec, report, as_of=as_of, dry_run=dry_run)
        return report

    async def _subject(
        self,
        subject: str,
        spec: AttributeSpec,
        report: ReslotReport,
        *,
        as_of: datetime,
        dry_run: bool,
    ) -> None:
        facts = walkable(
            await self._store.facts(subject), spec.name, await self._reviews.rejections(subject)
        )
        report.walked += len(facts)

        async def one(fact: Fact) -> Fill:
            async with self._gate:
                return await self._filler.fill(fact, spec)

        answers = await asyncio.gather(*(one(fact) for fact in facts))
        report.calls += len(facts) if self._model else 0
        for fact, fill in zip(facts, answers, strict=True):  # oldest claim first: log order
            if fill.error is not None:
                report.errors += 1
                continue
            if fill.verdict == "no":
                continue
            if fill.verdict == "ambiguous":
                if await self._reviews.get(subject, reslot_review_id(fact.fact_id, spec.name)):
                    report.skipped += 1
                    continue
                report.ambiguous += 1
            else:
                report.fills += 1
            command = reslot_command(fact, spec, fill, issued_at=as_of, vocabulary=self._vocabulary)
            report.commands.append(command.command_id)
            if not dry_run:
                await self._publish(command)
