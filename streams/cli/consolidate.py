"""``slotwise consolidate`` and ``slotwise reslot``: the background passes, run by hand or on
a schedule.

Both read subject state from Redis, ask the model (or the offline providers
when no API key is set), and publish commands on the candidates topic; the
worker applies them in order with the subjects' writes. They print what they
did and what it cost (``--json``: one object).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.console import Console

from slotwise.models.llm import ModelClient
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.redis.provenance import RedisProvenance
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.cli.durations import duration
from slotwise.streams.commands.log import CommandPublisher
from slotwise.streams.config import Settings
from slotwise.streams.passes.consolidate import ConsolidationPass, PassConfig
from slotwise.streams.passes.reslot import ReslotPass
from slotwise.streams.read.embedder_choice import configured_embedder
from slotwise.streams.read.store import open_store
from slotwise.streams.wiring.app import model_client
from slotwise.streams.wiring.background import pass_models
from slotwise.topics.codec import dumps
from slotwise.topics.records import Command

__all__ = ["consolidate", "reslot"]

log = logging.getLogger(__name__)
_out = Console()
_err = Console(stderr=True)

Subjects = Annotated[list[str] | None, typer.Option("--subject", help="A subject_id (repeatable).")]
AsOf = Annotated[
    datetime | None,
    typer.Option("--as-of", help="The pass's evaluation time (ISO-8601, UTC if bare); now."),
]
AsJson = Annotated[bool, typer.Option("--json", help="The report as one JSON object.")]
Price = Annotated[
    float, typer.Option("--price-per-call", help="Dollars per model call, for the estimate.")
]


def _aware(moment: datetime | None) -> datetime:
    if moment is None:
        return datetime.now(UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


async def _open(settings: Settings, stack: AsyncExitStack) -> tuple[RedisStore, ModelClient | None]:
    store = open_store(settings)
    stack.push_async_callback(store.close)
    client = None if settings.offline else model_client(settings)
    if client is not None:
        stack.push_async_callback(client.aclose)
    return store, client


def _print(report: dict[str, object], as_json: bool) -> None:
    if as_json:
        sys.stdout.write(dumps(report).decode() + "\n")
        sys.stdout.flush()
        return
    for name, value in report.items():
        _out.print(f"{name:>26}  {value}")


def consolidate(  # noqa: PLR0917 - typer reads its options from the parameters
    subject: Subjects = None,
    every_subject: Annotated[bool, typer.Option("--all", help="Every subject with facts.")] = False,
    max_calls: Annotated[
        int | None, typer.Option("--max-calls", help="Model calls this pass may make.")
    ] = None,
    max_calls_per_subject: Annotated[
        int, typer.Option("--max-calls-per-subject", help="Model calls per subject per pass.")
    ] = 20,
    every: Annotated[
        float | None,
        typer.Option(
            "--every",
            parser=duration,
            metavar="DURATION",
            help="Run again every DURATION (1h): a scheduled pass.",
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", help="Subjects asked about at once.")
    ] = 4,
    as_of: AsOf = None,
    price_per_call: Price = 0.0003,
    as_json: AsJson = False,
) -> None:
    """Ask about the pairs the write-time top-K never compared; publish what is found."""
    if bool(subject) == every_subject:
        raise typer.BadParameter("give --subject S (one or more) or --all")
    settings = Settings()

    async def one_pass(moment: datetime) -> dict[str, object]:
        async with AsyncExitStack() as stack:
            store, client = await _open(settings, stack)
            schema = AttributeSchema.load(settings.vocabulary)
            models = pass_models(settings, schema, client)
            prefix = settings.redis_prefix
            provenance = RedisProvenance(store, prefix=prefix)
            publisher = CommandPublisher(settings)

            async def publish(command: Command) -> None:
                publisher.publish(command)

            config = PassConfig(
                top_k=settings.top_k,
                floor=settings.vector_floor,
                max_calls=max_calls,
                max_calls_per_subject=max_calls_per_subject,
                price_per_call=price_per_call,
                model=models.model,
                concurrency=concurrency,
            )
            runner = ConsolidationPass(
                store,
                provenance=provenance,
                reviews=RedisReviews(store, prefix=prefix),
                embedder=await asyncio.to_thread(configured_embedder, settings),
                matcher=models.matcher,
                rederiver=models.rederiver,
                publish=publish,
                config=config,
            )
            started = time.monotonic()
            subjects = list(subject) if subject else provenance.subjects()
            report = await runner.run(subjects, as_of=moment)
            await asyncio.to_thread(publisher.flush)
            summary = report.summary()
            summary.update(
                as_of=moment.isoformat(),
                model="offline" if not models.model else settings.llm_model,
                seconds=round(time.monotonic() - started, 2),
            )
            return summary

    while True:
        moment = _aware(as_of) if every is None else datetime.now(UTC)
        _print(asyncio.run(one_pass(moment)), as_json)
        if every is None:
            return
        time.sleep(every)


def reslot(  # noqa: PLR0917 - typer reads its options from the parameters
    attribute: Annotated[str, typer.Option("--attribute", help="The attribute added.")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Ask and report; publish nothing.")
    ] = False,
    subject: Subjects = None,
    as_of: AsOf = None,
    price_per_call: Price = 0.0003,
    as_json: AsJson = False,
) -> None:
    """Move the free-text facts that fill a newly added attribute into its slot."""
    settings = Settings()
    schema = AttributeSchema.load(settings.vocabulary)
    spec = schema.get(attribute)
    if spec is None:
        raise typer.BadParameter(
            f"{attribute!r} is not in vocabulary v{schema.version} (SLOTWISE_VOCABULARY)"
        )

    async def run() -> dict[str, object]:
        async with AsyncExitStack() as stack:
            store, client = await _open(settings, stack)
            models = pass_models(settings, schema, client)
            prefix = settings.redis_prefix
            publisher = CommandPublisher(settings)

            async def publish(command: Command) -> None:
                publisher.publish(command)

            runner = ReslotPass(
                store,
                RedisReviews(store, prefix=prefix),
                models.filler,
                publish,
                vocabulary=schema.version,
                model=models.model,
                price_per_call=price_per_call,
            )
            subjects: list[str] | AsyncIterator[str] = (
                list(subject) if subject else RedisProvenance(store, prefix=prefix).subjects()
            )
            started = time.monotonic()
            report = await runner.run(spec, subjects, as_of=_aware(as_of), dry_run=dry_run)
            if not dry_run:
                await asyncio.to_thread(publisher.flush)
            summary = report.summary()
            summary["seconds"] = round(time.monotonic() - started, 2)
            return summary

    _print(asyncio.run(run()), as_json)
