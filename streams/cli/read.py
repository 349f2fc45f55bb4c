"""The read side for users and for checking: ``facts``, ``tail``, ``produce``, ``wait``."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, TopicPartition
from rich.console import Console
from rich.table import Table

from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.streams.cli.durations import duration
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import FactQuery, ReadError, Reads
from slotwise.streams.read.store import open_store
from slotwise.topics.codec import decode_record, encode_record, loads
from slotwise.topics.exceptions import RecordError
from slotwise.topics.records import CandidateFact, Command, Fact, Observation, SupersessionEvent

__all__ = ["committed_messages", "facts", "produce", "tail", "wait"]

_out = Console()
_err = Console(stderr=True)


class Tailable(StrEnum):
    supersessions = "supersessions"
    review = "review"
    facts = "facts"
    candidates = "candidates"
    deadletter = "deadletter"
    erasures = "erasures"


def facts(  # noqa: PLR0917 - typer reads its options from the parameters
    subject: Annotated[str, typer.Argument(help="The subject_id whose facts to show.")],
    history: Annotated[
        bool, typer.Option("--history", help="Also closed facts and their links.")
    ] = False,
    include_archived: Annotated[
        bool, typer.Option("--include-archived", help="Also the cold tier's facts.")
    ] = False,
    as_of: Annotated[
        datetime | None,
        typer.Option("--as-of", help="The facts true at this instant (ISO-8601, UTC if bare)."),
    ] = None,
    believed_at: Annotated[
        datetime | None,
        typer.Option("--believed-at", help="What slotwise believed at this instant."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    fact_id: Annotated[
        str | None,
        typer.Option(
            "--fact", help="Read this fact as its chain's current head (--history: the chain)."
        ),
    ] = None,
) -> None:
    """Show a subject's current facts (and, with --history, superseded and historical ones)."""
    query = FactQuery(_aware(as_of), _aware(believed_at), history, include_archived)

    async def read() -> list[Fact]:
        async with AsyncExitStack() as stack:
            reads = Reads.open(Settings(), stack)
            if fact_id is None:
                return await reads.facts(subject, query, via="cli")
            found = await reads.head(subject, fact_id, via="cli")
            if found is None or not history:
                return [] if found is None else [found.fact]
            links = await reads.facts(subject, FactQuery(history=True), only=found.chain, via="cli")
            return sorted(links, key=lambda f: found.chain.index(f.fact_id))

    try:
        rows = asyncio.run(read())
    except ReadError as exc:
        _err.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None
    if as_json:
        for fact in rows:
            sys.stdout.write(encode_record(fact).decode() + "\n")
        return
    _out.print(facts_table(subject, rows, history=history))


def _aware(moment: datetime | None) -> datetime | None:
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=UTC)


def facts_table(subject: str, rows: list[Fact], *, history: bool) -> Table:
    table = Table(title=f"facts of {subject}")
    for column in ("slot", "fact", "status", "valid", "seen"):
        table.add_column(column)
    if history:
        table.add_column("links")
    for f in rows:
        valid = f.valid_from.date().isoformat() + (
            f" → {f.valid_to.date()}" if f.valid_to else " →"
        )
        cells = [
            f.attribute or "·",
            f.text if f.value is None else str(f.value),
            f.status + (" (revalidate)" if f.needs_revalidation else ""),
            valid,
            f"{f.verification_count + 1}x",
        ]
        if history:
            links = []
            if f.supersedes:
                links.append(f"replaces {f.supersedes[:8]}")
            if f.superseded_by:
                links.append(f"replaced by {f.superseded_by[:8]}")
            cells.append(", ".join(links))
        style = "dim" if f.status != "current" else None
        table.add_row(*cells, style=style)
    return table


def tail(  # noqa: PLR0917 - typer reads its options from the parameters
    topic: Annotated[Tailable, typer.Argument(help="Which topic of the catalogue to read.")],
    from_beginning: Annotated[bool, typer.Option("--from-beginning")] = False,
    max_messages: Annotated[
        int | None, typer.Option("--max", help="Stop after N messages.")
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", parser=duration, metavar="DURATION", help="Stop after this long idle (5s)."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print raw JSON values, one per line.")
    ] = False,
    subject: Annotated[
        list[str] | None,
        typer.Option("--subject", help="Only these subjects' records (repeatable)."),
    ] = None,
) -> None:
    """Print the messages of a topic as they are committed (read_committed)."""
    if topic is Tailable.erasures:
        # Attestations print as a summary line each; erase.py imports this module.
        from slotwise.streams.cli.erase import tail_erasures  # noqa: PLC0415

        tail_erasures(subject, from_beginning, max_messages, timeout, as_json)
        return
    settings = Settings()
    name = getattr(settings.catalogue(), topic.value)
    wanted = set(subject or ())
    shown = 0
    for key, value in committed_messages(settings, name, from_beginning, None, timeout):
        if wanted and _subject_of(topic, key, value) not in wanted:
            continue
        shown += 1
        if max_messages is not None and shown > max_messages:
            return
        if as_json or topic is not Tailable.supersessions:
            sys.stdout.write((value or b"null").decode("utf-8", "replace") + "\n")
            sys.stdout.flush()
            continue
        event = decode_record(value, expect=(SupersessionEvent,))
        assert isinstance(event, SupersessionEvent)
        _out.print(
            f"[bold]{event.subject_id}[/] {event.attribute or '·'}: "
            f"[red]{event.old_value if event.old_value is not None else event.old_text}[/] → "
            f"[green]{event.new_value if event.new_value is not None else event.new_text}[/] "
            f"from {event.valid_from.date()} ({event.decided_by}: {event.reason})"
        )


def _subject_of(topic: Tailable, key: bytes | None, value: bytes | None) -> str | None:
    """The facts topic is keyed by fact_id; every other topic by the subject."""
    if topic is not Tailable.facts:
        return key.decode("utf-8", "replace") if key is not None else None
    try:
        body = loads(value or b"null")
    except ValueError:
        return None
    found = body.get("subject_id") if isinstance(body, dict) else None
    return found if isinstance(found, str) else None


def committed_messages(
    settings: Settings,
    topic: str,
    from_beginning: bool,
    max_messages: int | None,
    idle_timeout: float | None,
) -> Iterator[tuple[bytes | None, bytes | None]]:
    """``(key, value)`` of a topic's committed messages, from its end (or beginning) on,
    until ``max_messages`` or ``idle_timeout`` seconds without one."""
    consumer = Consumer(
        settings.librdkafka(
            {
                "group.id": f"slotwise-tail-{uuid.uuid4()}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
            }
        )
    )
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics[topic]
        if metadata.error is not None:
            raise typer.BadParameter(f"topic {topic}: {metadata.error}")
        start = OFFSET_BEGINNING if from_beginning else OFFSET_END
        consumer.assign([TopicPartition(topic, p, start) for p in metadata.partitions])
        seen, last = 0, time.monotonic()
        while max_messages is None or seen < max_messages:
            if idle_timeout is not None and time.monotonic() - last > idle_timeout:
                return
            message = consumer.poll(0.2)
            if message is None or message.error() is not None:
                continue
            seen, last = seen + 1, time.monotonic()
            yield message.key(), message.value()
    finally:
        consumer.close()


def produce(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="A .jsonl file.")],
) -> None:
    """Publish observations, candidates or commands from a JSON-lines file, keyed by subject_id.

    Every line is validated first; nothing is sent if any line is invalid.
    """
    settings = Settings()
    catalogue = settings.catalogue()
    batch: list[tuple[str, str, bytes]] = []
    errors = 0
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = decode_record(
                line,
                expect=(Observation, CandidateFact, Command),
                max_text_bytes=settings.max_text_bytes,
            )
        except RecordError as exc:
            errors += 1
            _err.print(f"[red]{path}:{number}:[/] {exc.reason}: {exc}")
            continue
        topic = catalogue.observations if isinstance(record, Observation) else catalogue.candidates
        batch.append((topic, record.subject_id, line))
    if errors:
        _err.print(f"{errors} invalid line(s); nothing was sent")
        raise typer.Exit(2)
    producer = idempotent_producer(settings.librdkafka())
    failures: list[str] = []

    def delivered(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(str(err))

    for topic, key, value in batch:
        producer.produce(
            topic,
            value=value,
            key=key.encode(),
            on_delivery=delivered,
            headers=[("content-type", b"application/json")],
        )
        producer.poll(0)
    remaining = producer.flush(30)
    if failures or remaining:
        _err.print(f"[red]{len(failures) + remaining} message(s) not delivered:[/] {failures[:3]}")
        raise typer.Exit(1)
    counts: dict[str, int] = {}
    for topic, _, _ in batch:
        counts[topic] = counts.get(topic, 0) + 1
    for topic, count in counts.items():
        _out.print(f"published {count} to {topic}")


def wait(
    subject: Annotated[str, typer.Argument(help="The subject_id.")],
    observation: Annotated[
        str, typer.Option("--observation", help="The observation_id to wait for.")
    ],
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            parser=duration,
            metavar="DURATION",
            help="How long before giving up (30s).",
        ),
    ] = 30.0,
) -> None:
    """Return once the observation is applied (read-your-writes); exit 1 on timeout."""

    async def block() -> bool:
        store = open_store(Settings())
        try:
            return await store.wait_for_observation(subject, observation, timeout)
        finally:
            await store.close()

    if not asyncio.run(block()):
        _err.print(f"observation {observation} of {subject} not applied within {timeout:g}s")
        raise typer.Exit(1)
    _out.print(f"observation {observation} of {subject} is applied")
