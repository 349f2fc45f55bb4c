"""The ``forget`` and ``restore`` commands: soft forgetting, ordered with the subject's writes.

Both travel on the candidates topic keyed by subject (``slotwise forget``,
``slotwise restore``, a restatement of an archived fact), so each has one place
among the subject's writes. Applying one, in this order:

1. **decide once** — read the subject (version, stored outputs, current facts)
   and, for ``forget``, its access counters; score at the command's ``as_of``
   with the policy in its ``params`` (``processors/forgetting.py``);
2. **store** the status changes (``archived``, or ``current`` for a restore)
   with the outputs — a ``fact/1`` per changed fact, for the compacted facts
   topic — in one Lua script, fenced by the subject's version and idempotent by
   the command id (``RedisStore.apply``);
3. **settle the tiers** — the cold-slot hint (``sinks/redis/cold.py``) and the
   vectors (``sinks/milvus/tiers.py``) follow the facts' state *as Redis has it
   now*: current in the hot tier, anything else in the cold one. With the
   policy's ``closed_to_cold`` (the default) a pass also moves the vectors of
   the subject's retired facts (superseded, out-of-order history), which serve
   neither default reads nor the vector fetch; their status and links stay.

*Determinism under replay.* The access counters change outside the log (a
read records an access without going through the subject's writes), so
scoring again after a crash could archive other facts. A command is therefore
scored once: the decision is stored with its outputs in step 2, and a replay
finds them, re-emits the same messages and only redoes step 3, which is
idempotent and converges on the stored state. The evaluation time is the
command's own ``as_of``, never the worker's clock; a fact recorded after it is
outside the pass.

*Crash safety.* A crash before step 2 leaves nothing (the replay decides);
after it, the facts are archived in Redis while their vectors may still be hot —
the vector fetch and every read filter by the Redis status, as they filter
superseded facts — and the replay's step 3 moves them (copy, then delete: at
worst in both tiers for a moment, never in neither).

A restore also raises the fact's last access to the command's ``as_of`` (a
maximum, so a replay changes nothing): a fact someone asked back must not fall
to the next pass for not having been read.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime

from prometheus_client import Counter, Gauge, Histogram

from slotwise.processors.cold_restate import ColdFacts
from slotwise.processors.forgetting import (
    ForgetPolicy,
    HalfLives,
    PolicyError,
    Selection,
    select_archived,
    summary,
)
from slotwise.processors.ports import Embedder
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.milvus.tiers import MilvusTiers
from slotwise.sinks.redis.access import RedisAccess
from slotwise.sinks.redis.cold import RedisColdIndex
from slotwise.sinks.redis.snapshot import Snapshot
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import ForgetSettings, Settings
from slotwise.streams.runtime.errors import UnsupportedCommand
from slotwise.streams.write.fenced import Decided, apply_fenced
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.codec import decode_record
from slotwise.topics.outbound import Outbound, record_message
from slotwise.topics.records import Command, Fact

__all__ = [
    "ARCHIVED",
    "RESTORED",
    "TIER_ROWS",
    "ColdTier",
    "Forgetting",
    "changed_facts",
    "open_forgetting",
]

log = logging.getLogger(__name__)

ARCHIVED = Counter(
    "slotwise_forget_archived_total", "Facts archived by forget commands", ["reason"]
)
RESTORED = Counter(
    "slotwise_forget_restored_total", "Facts brought back from the cold tier", ["trigger"]
)
COMMAND_SECONDS = Histogram(
    "slotwise_forget_command_seconds",
    "Time to apply one forget or restore command (one subject of a pass)",
    ["command"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
TIER_ROWS = Gauge("slotwise_tier_rows", "Fact vectors in each tier", ["tier"])
TIER_MOVES = Counter("slotwise_tier_moves_total", "Vector rows written to a tier", ["tier"])

_CLOSED = frozenset({"superseded", "history"})
FORGET_DECISION = "FORGET"
RESTORE_DECISION = "RESTORE"


@dataclass(frozen=True, slots=True)
class _Archiving:
    """A forget pass's selection for one subject, as the apply loop writes it."""

    selection: Selection
    facts: Sequence[Fact]
    outputs: StoredOutputs


@dataclass(frozen=True, slots=True)
class ColdTier:
    """The cascade's view of the cold tier (``processors.cold_restate.ColdFacts``)."""

    index: RedisColdIndex
    vectors: MilvusIndex

    async def archived_in_slot(self, subject_id: str, attribute: str | None) -> list[Fact]:
        return await self.index.archived_in_slot(subject_id, attribute)

    async def archived_count(self, subject_id: str) -> int:
        return await self.index.archived_count(subject_id)

    async def nearest_archived(
        self, subject_id: str, text: str, *, k: int, floor: float
    ) -> list[tuple[str, float]]:
        return await self.vectors.nearest(subject_id, text, k=k, floor=floor, tier="cold")


def changed_facts(outputs: StoredOutputs) -> list[Fact]:
    """The facts a command's stored outputs publish on the facts topic."""
    found: list[Fact] = []
    for message in outputs.messages:
        if message.topic == "facts" and message.value is not None:
            record = decode_record(message.value, expect=(Fact,))
            if isinstance(record, Fact):
                found.append(record)
    return found


class Forgetting:
    """The handlers of ``forget`` and ``restore`` commands (``WritePath.commands``)."""

    def __init__(
        self,
        store: RedisStore,
        tiers: MilvusTiers,
        *,
        schema: AttributeSchema,
        policy: ForgetPolicy,
        half_lives: HalfLives,
        now: Callable[[], datetime],
        tier_gauge_every_s: float = 30.0,
    ) -> None:
        self._store = store
        self._access = RedisAccess(store)
        self._cold = RedisColdIndex(store)
        self._tiers = tiers
        self._schema = schema
        self._policy = policy
        self._half_lives = half_lives
        self._now = now
        self._gauge_every_s = tier_gauge_every_s
        self._gauged_at = -tier_gauge_every_s

    async def forget(self, command: Command) -> tuple[Outbound, ...]:
        started = time.perf_counter()
        subject = command.subject_id
        as_of = command.as_of or command.issued_at
        try:
            policy = ForgetPolicy.from_params(command.params, self._policy)
        except PolicyError as exc:  # the record itself is bad: dead-lettered, not retried
            raise UnsupportedCommand(f"{command.command_id}: {exc}") from exc

        async def decide(seen: Snapshot) -> _Archiving:
            accesses = await self._access.read(subject)
            selection = select_archived(
                seen.slot, accesses, as_of=as_of, policy=policy, half_lives=self._half_lives
            )
            archived = [
                s.fact.model_copy(update={"status": "archived"}) for s in selection.archived
            ]
            outputs = StoredOutputs.of(
                [record_message("facts", f.fact_id, f) for f in archived],
                decision=FORGET_DECISION,
                reason=summary(selection, as_of=as_of, policy=policy),
            )
            return _Archiving(selection, archived, outputs)

        applied = await apply_fenced(
            self._store,
            subject,
            command.command_id,
            snapshot=lambda: self._store.snapshot_every_slot(subject, command.command_id),
            decide=decide,
            now=self._now,
        )
        outputs = applied.outputs
        if applied.decided is not None:
            ARCHIVED.labels("below_threshold").inc(applied.decided.selection.below_threshold)
            ARCHIVED.labels("over_budget").inc(applied.decided.selection.over_budget)
        moved = [f.fact_id for f in changed_facts(outputs)]
        if policy.closed_to_cold:
            # Retired facts' rows: which they are follows from the log alone (superseding
            # is final), so a replay finds the same ones, or more, never fewer.
            every = await self._store.facts(subject, include_history=True)
            moved += [f.fact_id for f in every if f.status in _CLOSED]
        await self._settle(subject, moved)
        COMMAND_SECONDS.labels("forget").observe(time.perf_counter() - started)
        return outputs.messages

    async def restore(self, command: Command) -> tuple[Outbound, ...]:
        started = time.perf_counter()
        subject = command.subject_id
        wanted = list(
            dict.fromkeys([*([command.fact_id] if command.fact_id else []), *command.fact_ids])
        )
        as_of = command.as_of or command.issued_at

        async def decide(_: Snapshot) -> Decided:
            restored, refused = await self._restorable(subject, wanted)
            outputs = StoredOutputs.of(
                [record_message("facts", f.fact_id, f) for f in restored],
                decision=RESTORE_DECISION,
                reason=_restore_reason(wanted, restored, refused, command.reason),
            )
            return Decided(restored, outputs)

        applied = await apply_fenced(
            self._store,
            subject,
            command.command_id,
            snapshot=lambda: self._store.snapshot(subject, command.command_id),
            decide=decide,
            now=self._now,
        )
        outputs = applied.outputs
        if applied.decided is not None:
            trigger = "restatement" if (command.reason or "").startswith("restated") else "request"
            RESTORED.labels(trigger).inc(len(applied.decided.facts))
        ids = [f.fact_id for f in changed_facts(outputs)]
        if ids:
            await self._access.touch(subject, ids, as_of)
        await self._settle(subject, ids)
        COMMAND_SECONDS.labels("restore").observe(time.perf_counter() - started)
        return outputs.messages

    async def _restorable(
        self, subject: str, wanted: Sequence[str]
    ) -> tuple[list[Fact], dict[str, str]]:
        """The archived facts among ``wanted`` that can come back, and why others cannot."""
        facts = {f.fact_id: f for f in await self._store.get_facts(subject, wanted)}
        restored: list[Fact] = []
        refused: dict[str, str] = {}
        for fact_id in wanted:
            fact = facts.get(fact_id)
            if fact is None:
                refused[fact_id] = "no such fact"
                continue
            if fact.status != "archived":
                refused[fact_id] = f"is {fact.status}, not archived"
                continue
            spec = self._schema.get(fact.attribute)
            if spec is not None and spec.single_valued and fact.attribute is not None:
                holder = await self._store.current_in_slot(subject, fact.attribute)
                if holder:
                    refused[fact_id] = f"{fact.attribute} is held by {holder[-1].fact_id}"
                    continue
            restored.append(fact.model_copy(update={"status": "current"}))
        return restored, refused

    async def _settle(self, subject: str, fact_ids: Sequence[str]) -> None:
        """The hint and the vectors follow the facts' state in Redis now (step 3)."""
        if not fact_ids:
            return
        facts = await self._store.get_facts(subject, fact_ids)
        await self._cold.mark(subject, [f for f in facts if f.status == "archived"])
        await self._cold.unmark(subject, [f for f in facts if f.status != "archived"])
        moves = await self._tiers.settle(subject, facts)
        TIER_MOVES.labels("cold").inc(moves.to_cold)
        TIER_MOVES.labels("hot").inc(moves.to_hot)
        await self._gauge_tiers()

    async def _gauge_tiers(self) -> None:
        now = time.monotonic()
        if now - self._gauged_at < self._gauge_every_s:
            return
        self._gauged_at = now
        try:
            for tier, rows in (await self._tiers.counts()).items():
                TIER_ROWS.labels(tier).set(rows)
        except Exception as exc:  # a metric must never fail a command
            log.warning("counting the tiers' rows failed: %s", exc)


def _restore_reason(
    wanted: Sequence[str], restored: Sequence[Fact], refused: Mapping[str, str], why: str | None
) -> str:
    parts = [f"restore: {len(restored)} of {len(wanted)} restored"]
    parts += [f"{fact_id} {cause}" for fact_id, cause in refused.items()]
    if why:
        parts.append(why)
    return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class ForgettingServices:
    forgetting: Forgetting
    cold: ColdFacts
    tiers: MilvusTiers


def open_forgetting(
    settings: Settings,
    store: RedisStore,
    index: MilvusIndex,
    embedder: Embedder,
    schema: AttributeSchema,
    *,
    stack: AsyncExitStack,
    now: Callable[[], datetime],
    forget_settings: ForgetSettings | None = None,
) -> ForgettingServices:
    """The handlers, and the cold tier the cascade reads, for one worker."""
    knobs = forget_settings or ForgetSettings()
    tiers = MilvusTiers(
        index,
        embedder,
        uri=settings.milvus_uri,
        token=settings.milvus_token.get_secret_value() if settings.milvus_token else None,
        flush_every=settings.milvus_flush_every,
    )
    stack.push_async_callback(tiers.close)
    forgetting = Forgetting(
        store,
        tiers,
        schema=schema,
        policy=knobs.policy(),
        half_lives=knobs.half_lives_of(schema),
        now=now,
    )
    return ForgettingServices(forgetting, ColdTier(RedisColdIndex(store), index), tiers)
