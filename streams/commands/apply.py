"""How the background jobs' commands are applied: through the subject's log, like writes.

A review decision, a consolidation finding and a re-slotting result are
``command/1`` records on the candidates topic, keyed by subject, so each has
a place among the subject's writes. Its handler (``streams/commands/review.py``,
``streams/commands/consolidate.py``, ``streams/passes/reslot.py``) is a function of the
command and the subject's state *at that place*, run by :class:`Applier`
exactly as the write path runs a candidate:

1. snapshot the subject (one round trip): if the command was applied before
   (a replay), its stored outputs are re-emitted and nothing is decided;
2. decide — a pure policy over the facts read now, never over what a pass
   read before its model calls (the odysseus #1940 lesson): a finding whose
   facts changed meanwhile is dropped;
3. mark the facts derived from whatever the change supersedes
   (``processors.provenance``), in the same change;
4. write the facts and the outputs in one Lua call, idempotent by
   ``command_id`` and fenced by the subject's version; a stale version means
   a write landed in between, and the command is decided again.

After the write, :class:`FollowUps` files what the outputs say into the
review store and the provenance index. It runs for every candidate too (the
write path's REVIEW items, derived candidates) and again on every replay, so
a crash between the write and the follow-up is repaired before the subject's
next event is decided: everything it writes is idempotent and none of it
decides anything.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from prometheus_client import Counter, Histogram

from slotwise.processors.change import Change
from slotwise.processors.ports import StateStore, SubjectSnapshot, VectorSink
from slotwise.processors.provenance import DEFAULT_DEPTH, mark_dependents
from slotwise.processors.review_policy import rejection_keys
from slotwise.sinks.redis.provenance import RedisProvenance
from slotwise.sinks.redis.review import RedisReviews
from slotwise.streams.runtime.errors import UnsupportedCommand
from slotwise.streams.write.fenced import apply_fenced
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.codec import decode_record
from slotwise.topics.outbound import Outbound, record_message
from slotwise.topics.records import CandidateFact, Command, Fact, ReviewItem

__all__ = ["LIFECYCLE_DECISIONS", "Applier", "FollowUps", "MalformedCommand", "messages"]

LIFECYCLE_DECISIONS = Counter(
    "slotwise_lifecycle_commands_total",
    "Background commands applied (review, consolidate, reslot), by kind and decision",
    ["command", "decision"],
)
LIFECYCLE_SECONDS = Histogram(
    "slotwise_lifecycle_command_seconds",
    "Time to apply one background command, by kind",
    ["command"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)


class MalformedCommand(UnsupportedCommand):
    """A background command without the fields its kind needs: dead-lettered."""


def messages(change: Change) -> list[Outbound]:
    """What a change publishes, in the write path's order: facts, events, review records."""
    out = [record_message("facts", fact.fact_id, fact) for fact in change.facts]
    out += [record_message("supersessions", e.subject_id, e) for e in change.supersessions]
    out += [record_message("review", item.subject_id, item) for item in change.reviews]
    return out


def _decoded(outputs: StoredOutputs, topic: str) -> list[object]:
    return [
        decode_record(m.value) for m in outputs.messages if m.topic == topic and m.value is not None
    ]


@dataclass(frozen=True, slots=True)
class FollowUps:
    """Files review items and provenance links from an applied event's outputs."""

    reviews: RedisReviews
    provenance: RedisProvenance

    async def after_candidate(self, candidate: CandidateFact, outputs: StoredOutputs) -> None:
        """The write path's observer: REVIEW items, and the links of a derived candidate."""
        if outputs.decision == "REVIEW" or any(m.topic == "review" for m in outputs.messages):
            await self.file([r for r in _decoded(outputs, "review") if isinstance(r, ReviewItem)])
        if candidate.derived_from:
            facts = [f for f in _decoded(outputs, "facts") if isinstance(f, Fact)]
            await self.provenance.record(f for f in facts if f.derived_from)

    async def after_change(self, outputs: StoredOutputs) -> None:
        records = _decoded(outputs, "review") + _decoded(outputs, "facts")
        await self.file([r for r in records if isinstance(r, ReviewItem)])
        await self.provenance.record(r for r in records if isinstance(r, Fact) and r.derived_from)

    async def file(self, items: list[ReviewItem]) -> None:
        if items:
            rejected = {i.review_id: rejection_keys(i) for i in items if i.status == "rejected"}
            await self.reviews.file(items, rejected)


Decide = Callable[[SubjectSnapshot], Awaitable[Change]]


@dataclass(frozen=True, slots=True)
class _Changed:
    """A command's change and its outputs, as the apply loop writes them."""

    change: Change
    outputs: StoredOutputs

    @classmethod
    def of(cls, change: Change) -> _Changed:
        outputs = StoredOutputs.of(
            messages(change), change.vector_rows, decision=change.decision, reason=change.reason
        )
        return cls(change, outputs)

    @property
    def facts(self) -> Sequence[Fact]:
        return self.change.facts


After = Callable[[StoredOutputs], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Applier:
    """Runs one background command through the subject's state (see the module docstring)."""

    store: StateStore
    vectors: VectorSink
    follow: FollowUps
    now: Callable[[], datetime]
    depth: int = DEFAULT_DEPTH

    async def run(
        self, command: Command, decide: Decide, *, after: After | None = None
    ) -> tuple[Outbound, ...]:
        started = time.perf_counter()
        outputs = await self._applied(command, decide)
        await self.follow.after_change(outputs)
        if after is not None:
            await after(outputs)
        self.vectors.add(outputs.vectors)
        LIFECYCLE_SECONDS.labels(command.command).observe(time.perf_counter() - started)
        return outputs.messages

    async def _applied(self, command: Command, decide: Decide) -> StoredOutputs:
        subject = command.subject_id

        async def decided(seen: SubjectSnapshot) -> _Changed:
            change = await self._with_dependents(await decide(seen), seen, subject)
            return _Changed.of(change)

        applied = await apply_fenced(
            self.store,
            subject,
            command.command_id,
            snapshot=lambda: self.store.snapshot(subject, command.command_id),
            decide=decided,
            now=self.now,
        )
        if applied.decided is not None:
            LIFECYCLE_DECISIONS.labels(command.command, applied.decided.change.decision).inc()
        return applied.outputs

    async def _with_dependents(self, change: Change, seen: SubjectSnapshot, subject: str) -> Change:
        retired = tuple(e.old_fact_id for e in change.supersessions)
        if not retired:
            return change
        marked = await mark_dependents(
            self.follow.provenance,
            seen,
            subject,
            retired,
            depth=self.depth,
            written={f.fact_id for f in change.facts},
        )
        if not marked:
            return change
        return change.plus(
            Change(change.decision, f"{len(marked)} derived fact(s) to revalidate", marked)
        )
