"""``slotwise worker`` and ``slotwise demo``: run the write path."""

from __future__ import annotations

import asyncio
import logging
import signal
import uuid
import zlib
from contextlib import AsyncExitStack
from typing import Annotated

import typer
import uvloop
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from rich.console import Console
from rich.table import Table

from slotwise.sinks.exceptions import EmbeddingModelMismatch
from slotwise.sinks.kafka.access import KafkaAccessDenied
from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.streams.cli.durations import duration
from slotwise.streams.cli.read import facts_table
from slotwise.streams.config import Settings
from slotwise.streams.dev.demo import observations
from slotwise.streams.dev.stack import Stack, StackError
from slotwise.streams.read.store import open_store
from slotwise.streams.runtime.consumed import Consumed
from slotwise.streams.runtime.diagnostics import log_stacks
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.codec import decode_record, encode_record
from slotwise.topics.records import CandidateFact, Command, ReviewItem, SupersessionEvent

__all__ = ["demo", "worker"]

_out = Console()
_err = Console(stderr=True)


def worker(
    instance: Annotated[
        str | None,
        typer.Option(
            help="Stable name of this replica (default: the host name); it keys the "
            "Kafka transactional id, so a restarted replica fences its own leftovers."
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(help="Python logging level.")] = "INFO",
) -> None:
    """Consume observations and candidates until SIGTERM/SIGINT, then drain, commit and exit."""
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    settings = Settings()

    from slotwise.streams.wiring.app import run_worker  # noqa: PLC0415 - the model SDKs load only for workers

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        loop.add_signal_handler(signal.SIGUSR1, log_stacks)
        await run_worker(settings, stop, instance=instance)

    # uvloop: the worker is a loop of small socket round trips (Redis, Milvus, the
    # model); its event loop costs less per trip than asyncio's.
    try:
        uvloop.run(main())
    except (EmbeddingModelMismatch, KafkaAccessDenied) as exc:
        # A deployment error with its remedy in the message, not a crash: one line, exit 1.
        logging.getLogger("slotwise.streams.runtime.worker").error("refused to start: %s", exc)
        raise typer.Exit(1) from None


def demo(
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            parser=duration,
            metavar="DURATION",
            help="How long to wait for the conversation to apply (3m).",
        ),
    ] = 180.0,
) -> None:
    """Bring the stack up, start a worker, replay a short conversation, and show what it wrote."""
    logging.basicConfig(level=logging.WARNING)
    settings = Settings().model_copy(update={"metrics_port": 0})
    try:
        with _out.status(
            "starting Kafka, Redis and Milvus Lite (first run resolves Kafka from Maven)…"
        ):
            Stack(settings).up()
    except StackError as exc:
        _err.print(f"[red]stack up failed:[/] {exc}")
        raise typer.Exit(1) from None
    catalogue = settings.catalogue()
    ensure_topics(settings.librdkafka(), catalogue, settings.replication_factor)
    subject = f"demo-ana-{uuid.uuid4().hex[:6]}"
    asyncio.run(_demo(settings, subject, timeout))


async def _demo(settings: Settings, subject: str, timeout: float) -> None:
    from slotwise.streams.wiring.app import run_worker  # noqa: PLC0415 - the model SDKs load only for workers

    catalogue = settings.catalogue()
    turns = observations(subject)
    stop = asyncio.Event()
    running = asyncio.create_task(
        run_worker(settings, stop, instance=f"demo-{uuid.uuid4().hex[:6]}")
    )
    async with AsyncExitStack() as stack:
        store = open_store(settings)
        stack.push_async_callback(store.close)
        producer = idempotent_producer(settings.librdkafka())
        for turn in turns:
            producer.produce(
                catalogue.observations, key=subject.encode(), value=encode_record(turn)
            )
        producer.flush(30)
        with _out.status(f"applying {len(turns)} turns of {subject}…"):
            applied = await store.wait_for_observation(subject, turns[-1].observation_id, timeout)
        if not applied:
            stop.set()
            await running
            _err.print(f"[red]the conversation was not applied within {timeout:g}s[/]")
            raise typer.Exit(1)
        extracted = await asyncio.to_thread(_candidates_of, settings, subject)
        decisions = Table(title="what each turn did", show_lines=True)
        for column in ("turn", "fact", "decision", "why"):
            decisions.add_column(column)
        for turn in turns:
            candidates = extracted.get(turn.observation_id, [])
            if not candidates:
                decisions.add_row(turn.text, "—", "none", "not a fact about the user")
            for candidate in candidates:
                blob = await store.applied(subject, candidate.candidate_id)
                outputs = StoredOutputs.decode(blob) if blob else None
                decisions.add_row(
                    turn.text,
                    f"{candidate.attribute or '·'} = {candidate.value}"
                    if candidate.attribute
                    else candidate.text,
                    outputs.decision if outputs else "?",
                    outputs.reason if outputs else "",
                )
        _out.print(decisions)
        _out.print(
            facts_table(subject, await store.facts(subject, include_history=True), history=True)
        )
        events = await asyncio.to_thread(
            _subject_messages, settings, catalogue.supersessions, subject
        )
        table = Table(title="supersession events (slotwise.supersessions.v1)")
        for column in ("attribute", "old", "new", "valid from", "decided by"):
            table.add_column(column)
        for raw in events:
            event = decode_record(raw, expect=(SupersessionEvent,))
            assert isinstance(event, SupersessionEvent)
            table.add_row(
                event.attribute or "·",
                str(event.old_value),
                str(event.new_value),
                event.valid_from.date().isoformat(),
                event.decided_by,
            )
        _out.print(table)
        for raw in await asyncio.to_thread(_subject_messages, settings, catalogue.review, subject):
            item = decode_record(raw, expect=(ReviewItem,))
            assert isinstance(item, ReviewItem)
            _out.print(f"[yellow]review[/] ({item.kind}): {item.candidate.text} — {item.reason}")
    stop.set()
    await running
    _out.print(
        f"\nTry: slotwise facts {subject} --history\n"
        "     slotwise tail supersessions --from-beginning --timeout 5"
    )


def _subject_messages(settings: Settings, topic: str, subject: str) -> list[bytes]:
    return [value for key, value in _read_partition(settings, topic, subject) if value is not None]


def _candidates_of(settings: Settings, subject: str) -> dict[str, list[CandidateFact]]:
    """The candidates extracted per observation, read back from the candidates topic."""
    by_observation: dict[str, list[CandidateFact]] = {}
    for _, value in _read_partition(settings, settings.catalogue().candidates, subject):
        record = decode_record(value, expect=(CandidateFact, Command))
        if isinstance(record, CandidateFact) and record.observation_id:
            by_observation.setdefault(record.observation_id, []).append(record)
    return by_observation


def _read_partition(
    settings: Settings, topic: str, subject: str
) -> list[tuple[bytes | None, bytes | None]]:
    """Every committed message of ``subject`` up to the current end of its partition."""
    key = subject.encode()
    # librdkafka's default partitioner (consistent_random): CRC32 of the key.
    tp = TopicPartition(topic, zlib.crc32(key) % settings.partitions, OFFSET_BEGINNING)
    consumer = Consumer(
        settings.librdkafka(
            {
                "group.id": f"slotwise-demo-{uuid.uuid4()}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
            }
        )
    )
    try:
        _, high = consumer.get_watermark_offsets(tp, timeout=10)
        found: list[tuple[bytes | None, bytes | None]] = []
        if high <= 0:
            return found
        consumer.assign([tp])
        while True:
            message = consumer.poll(1.0)
            if message is None:
                return found
            if message.error() is not None:
                continue
            consumed = Consumed.of(message)
            if consumed.key == key:
                found.append((consumed.key, consumed.value))
            if consumed.offset >= high - 1:
                return found
    finally:
        consumer.close()
