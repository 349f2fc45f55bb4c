"""A forget pass from the outside: its commands, publishing them, waiting, the schedule.

A pass is one ``forget`` command per subject, all with the same ``as_of`` and
policy (in ``params``, with the pass id), published on the candidates topic
keyed by subject with librdkafka's default partitioner (the worker's), so
each lands among its subject's writes. The worker applies them; this module
never changes a subject itself. A dry run scores the subjects here instead,
from the same state the worker reads, and publishes nothing.

The scheduled pass (``slotwise forget --all --every 6h``) is a loop in its own
process: each round publishes a pass evaluated at the round's start, waits for
it to be applied (bounded by the interval), then sleeps until the next round.
It stops between rounds, or while waiting, when its stop event is set (SIGINT,
SIGTERM). Commands of a round never overlap the next round's.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from slotwise.processors.forgetting import (
    ForgetPolicy,
    HalfLives,
    Selection,
    select_archived,
)
from slotwise.processors.model import stable_id
from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.sinks.redis.access import RedisAccess
from slotwise.sinks.redis.cold import subjects
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.commands.forget import FORGET_DECISION, changed_facts
from slotwise.streams.config import Settings
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.codec import encode_record
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Command

__all__ = [
    "PassError",
    "PassReport",
    "all_subjects",
    "dry_run",
    "forget_commands",
    "publish_commands",
    "run_schedule",
    "wait_applied",
]

log = logging.getLogger(__name__)


class PassError(SlotwiseError, RuntimeError):
    """A pass could not be published."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


def forget_commands(
    subject_ids: Iterable[str],
    *,
    as_of: datetime,
    policy: ForgetPolicy,
    pass_id: str | None = None,
    issued_at: datetime | None = None,
) -> list[Command]:
    """One ``forget`` command per subject, ids derived from the pass and the subject."""
    pass_id = pass_id or str(uuid.uuid4())
    issued = issued_at or _utc_now()
    params = {**policy.params(), "pass_id": pass_id}
    return [
        Command(
            schema="command/1",
            command_id=stable_id("forget", pass_id, subject),
            subject_id=subject,
            command="forget",
            issued_at=issued,
            as_of=as_of,
            reason=f"forget pass {pass_id}",
            params=params,
        )
        for subject in dict.fromkeys(subject_ids)
    ]


async def all_subjects(store: RedisStore) -> list[str]:
    """Every subject of the deployment, sorted (the pass publishes in this order)."""
    return sorted([s async for s in subjects(store)])


def publish_commands(
    settings: Settings, commands: Sequence[Command], timeout_s: float = 60
) -> None:
    """Publish on the candidates topic, keyed by subject; raises if any is not delivered."""
    topic = settings.catalogue().candidates
    producer = idempotent_producer(settings.librdkafka())
    failures: list[str] = []

    def delivered(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(str(err))

    for command in commands:
        producer.produce(
            topic,
            key=command.subject_id.encode(),
            value=encode_record(command),
            headers=[("content-type", b"application/json"), ("schema", b"command/1")],
            on_delivery=delivered,
        )
        producer.poll(0)
    remaining = producer.flush(timeout_s)
    if failures or remaining:
        raise PassError(f"{len(failures) + remaining} command(s) not delivered: {failures[:3]}")


@dataclass
class PassReport:
    """What a published pass did, from the outputs its commands stored."""

    commands: int
    applied: int = 0
    archived: int = 0
    seconds: float = 0.0
    by_subject: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.applied == self.commands


async def wait_applied(
    store: RedisStore,
    commands: Sequence[Command],
    *,
    timeout_s: float,
    stop: asyncio.Event | None = None,
    poll_s: float = 0.5,
    started: float | None = None,
) -> PassReport:
    """Until every command is applied (or the timeout, or ``stop``): what they archived."""
    begun = time.monotonic() if started is None else started
    waiting = {c.command_id: c for c in commands}
    report = PassReport(commands=len(commands))
    deadline = time.monotonic() + timeout_s
    while waiting:
        ids = list(waiting)
        blobs = await store.applied_many([(waiting[c].subject_id, c) for c in ids])
        for command_id, blob in zip(ids, blobs, strict=True):
            if blob is None:
                continue
            command = waiting.pop(command_id)
            outputs = StoredOutputs.decode(blob)
            archived = len(changed_facts(outputs)) if outputs.decision == FORGET_DECISION else 0
            report.applied += 1
            report.archived += archived
            report.by_subject[command.subject_id] = archived
        report.seconds = time.monotonic() - begun
        if not waiting or time.monotonic() > deadline or (stop is not None and stop.is_set()):
            break
        await asyncio.sleep(poll_s)
    return report


async def dry_run(
    store: RedisStore,
    subject_ids: Sequence[str],
    *,
    as_of: datetime,
    policy: ForgetPolicy,
    half_lives: HalfLives,
) -> dict[str, Selection]:
    """What a pass at ``as_of`` would archive now, scored here from the worker's inputs."""
    access = RedisAccess(store)
    found: dict[str, Selection] = {}
    for subject in subject_ids:
        seen = await store.snapshot_every_slot(subject)
        found[subject] = select_archived(
            seen.slot,
            await access.read(subject),
            as_of=as_of,
            policy=policy,
            half_lives=half_lives,
        )
    return found


async def run_schedule(
    settings: Settings,
    store: RedisStore,
    *,
    every_s: float,
    policy: ForgetPolicy,
    stop: asyncio.Event,
    rounds: int | None = None,
    clock: Callable[[], datetime] = _utc_now,
    on_round: Callable[[PassReport], None] = lambda _report: None,
) -> int:
    """Publish a pass over every subject every ``every_s`` seconds until ``stop`` (or
    ``rounds``); the rounds run."""
    done = 0
    while not stop.is_set() and (rounds is None or done < rounds):
        begun = time.monotonic()
        as_of = clock()
        commands = forget_commands(await all_subjects(store), as_of=as_of, policy=policy)
        if commands:
            await asyncio.to_thread(publish_commands, settings, commands)
            report = await wait_applied(
                store, commands, timeout_s=every_s, stop=stop, started=begun
            )
            log.info(
                "forget pass as of %s: %d of %d subjects applied, %d facts archived in %.1f s",
                as_of.isoformat(),
                report.applied,
                report.commands,
                report.archived,
                report.seconds,
            )
            on_round(report)
        else:
            on_round(PassReport(commands=0))
        done += 1
        if rounds is not None and done >= rounds:
            break
        remaining = every_s - (time.monotonic() - begun)
        if remaining > 0:
            try:
                await asyncio.wait_for(stop.wait(), timeout=remaining)
            except TimeoutError:
                pass
    return done
