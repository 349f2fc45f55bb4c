"""``slotwise erase`` and ``slotwise erasures tail``: request an erasure, read its attestation.

An erase is a ``command/1`` on the candidates topic keyed by the subject, so
it takes its place among the subject's writes: those before it are erased,
those after it kept. The worker publishes an ``erasure/1`` attestation on the
erasures topic when it has deleted and checked; ``--wait`` reads it back
(``read_committed``), positioned before the command is sent so it cannot miss it.
"""

from __future__ import annotations

import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Annotated

import typer
from confluent_kafka import Consumer, TopicPartition
from pydantic import ValidationError
from rich.console import Console

from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.streams.cli.durations import deprecated, duration
from slotwise.streams.cli.read import committed_messages
from slotwise.streams.config import Settings
from slotwise.topics.codec import CONTENT_TYPE, decode_record, encode_record
from slotwise.topics.exceptions import RecordError
from slotwise.topics.records import Command, ErasureAttestation

__all__ = ["erase", "erasures_app", "tail_erasures"]

_out = Console()
_err = Console(stderr=True)

erasures_app = typer.Typer(
    help="The old spelling of `slotwise tail erasures`.", no_args_is_help=True, hidden=True
)


def erase(  # noqa: PLR0917 - typer reads its options from the parameters
    subject: Annotated[
        str, typer.Argument(help="The subject_id to erase (all of it, unless scoped).")
    ],
    attribute: Annotated[
        str | None, typer.Option("--attribute", help="Erase only this attribute's facts.")
    ] = None,
    fact: Annotated[
        str | None, typer.Option("--fact", help="Erase only this fact (its id).")
    ] = None,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why; kept in the attestation.")
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for the attestation and print it.")
    ] = False,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", parser=duration, metavar="DURATION", help="How long --wait waits (5m)."
        ),
    ] = 300.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the attestation's JSON.")] = False,
) -> None:
    """Erase a subject, one attribute or one fact from every store, ordered with its writes.

    Exit status with --wait: 0 verified, 1 no attestation in time, 3 not verified.
    """
    if attribute is not None and fact is not None:
        raise typer.BadParameter("give --attribute or --fact, not both")
    settings = Settings()
    catalogue = settings.catalogue()
    try:
        command = Command(
            command_id=str(uuid.uuid4()),
            subject_id=subject,
            command="erase",
            issued_at=datetime.now(UTC),
            attribute=attribute,
            fact_id=fact,
            reason=reason,
        )
    except ValidationError as exc:
        raise typer.BadParameter(str(exc.errors(include_url=False)[0]["msg"])) from None
    watcher = _Watcher(settings, catalogue.erasures) if wait else None
    try:
        producer = idempotent_producer(settings.librdkafka())
        producer.produce(
            catalogue.candidates,
            key=subject.encode(),
            value=encode_record(command),
            headers=[("content-type", CONTENT_TYPE.encode()), ("schema", b"command/1")],
        )
        if producer.flush(30):
            _err.print("[red]the erase command was not delivered[/]")
            raise typer.Exit(1)
        _err.print(f"erase {command.command_id} of {subject} sent to {catalogue.candidates}")
        if watcher is None:
            return
        attested = watcher.wait(command.command_id, timeout)
    finally:
        if watcher is not None:
            watcher.close()
    if attested is None:
        _err.print(f"[red]no attestation for {command.command_id} within {timeout:g}s[/]")
        raise typer.Exit(1)
    _show(attested, as_json=as_json, full=True)
    if not attested.verified:
        raise typer.Exit(3)


@erasures_app.command("tail")
def erasures_tail(
    subject: Annotated[
        str | None, typer.Option("--subject", help="Only this subject's attestations.")
    ] = None,
    from_beginning: Annotated[bool, typer.Option("--from-beginning")] = False,
    max_messages: Annotated[
        int | None, typer.Option("--max", help="Stop after N attestations.")
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", parser=duration, metavar="DURATION", help="Stop after this long idle (5s)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """The old spelling of ``slotwise tail erasures``."""
    deprecated("`slotwise erasures tail` is now `slotwise tail erasures`")
    tail_erasures([subject] if subject else None, from_beginning, max_messages, timeout, as_json)


def tail_erasures(
    subjects: list[str] | None,
    from_beginning: bool,
    max_messages: int | None,
    timeout: float | None,
    as_json: bool,
) -> None:
    """Print erasure attestations as they are committed (read_committed)."""
    settings = Settings()
    shown = 0
    wanted = {s.encode() for s in subjects} if subjects else None
    for key, value in committed_messages(
        settings, settings.catalogue().erasures, from_beginning, None, timeout
    ):
        if wanted is not None and key not in wanted:
            continue
        try:
            record = decode_record(value, expect=(ErasureAttestation,))
        except RecordError as exc:
            _err.print(f"[yellow]skipped a record that is not an attestation:[/] {exc}")
            continue
        assert isinstance(record, ErasureAttestation)
        _show(record, as_json=as_json, full=False)
        shown += 1
        if max_messages is not None and shown >= max_messages:
            return


def _show(attested: ErasureAttestation, *, as_json: bool, full: bool) -> None:
    if as_json:
        sys.stdout.write(encode_record(attested).decode() + "\n")
        sys.stdout.flush()
        return
    scope: str = attested.scope
    if attested.attribute:
        scope += f" {attested.attribute}"
    if attested.fact_id:
        scope += f" {attested.fact_id}"
    verdict = "[green]verified[/]" if attested.verified else "[red]NOT verified[/]"
    vectors = sum(v for k, v in attested.deleted.items() if k.startswith("milvus:"))
    left = sum(attested.remaining.values())
    _out.print(
        f"{attested.completed_at.isoformat()} [bold]{attested.subject_id}[/] {scope}: {verdict}; "
        f"{attested.deleted.get('redis:facts', 0)} facts, {vectors} vectors deleted; "
        f"{left} left; {len(attested.checks)} checks (command {attested.command_id})"
    )
    if not full:
        return
    for check in attested.checks:
        if check.found:
            _out.print(f"  [red]left[/] {check.store} {check.method}: {check.found}")
    for copy in attested.retained:
        until = copy.expires_by.isoformat() if copy.expires_by else "no bound"
        _out.print(f"  retained ({copy.reach}) {copy.store}: until {until} — {copy.note}")


class _Watcher:
    """Reads a topic from its current end on, so a reply sent after this exists is seen."""

    def __init__(self, settings: Settings, topic: str) -> None:
        self._consumer = Consumer(
            settings.librdkafka(
                {
                    "group.id": f"slotwise-erase-{uuid.uuid4()}",
                    "enable.auto.commit": False,
                    "isolation.level": "read_committed",
                }
            )
        )
        partitions = self._consumer.list_topics(topic, timeout=10).topics[topic].partitions
        ends = []
        for p in partitions:
            _low, high = self._consumer.get_watermark_offsets(TopicPartition(topic, p), 10)
            ends.append(TopicPartition(topic, p, high))
        self._consumer.assign(ends)

    def wait(self, command_id: str, timeout_s: float) -> ErasureAttestation | None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            message = self._consumer.poll(0.5)
            if message is None or message.error() is not None:
                continue
            try:
                record = decode_record(message.value(), expect=(ErasureAttestation,))
            except RecordError:
                continue
            if isinstance(record, ErasureAttestation) and record.command_id == command_id:
                return record
        return None

    def close(self) -> None:
        self._consumer.close()
