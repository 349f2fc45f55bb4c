"""What the worker does with one record: observation → candidates; candidate → state.

A candidate is decided once. What deciding it reads about the subject (the
version, a stored outcome, its own fact, its slot) is one store round trip and
its write another. Its state change and its outputs (the messages to
publish, the vector rows to index) are stored atomically in Redis under the
candidate's id; a replay of an applied candidate reads them back instead of
deciding again, so it re-emits the same messages and re-indexes the same rows.
A decision computed against a state that moved meanwhile (a zombie worker after
a rebalance) is refused by the store's version check and computed again.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from slotwise.processors.guards import Resolver
from slotwise.processors.model import Resolution, stable_id
from slotwise.processors.ports import Extractor, StateStore, SubjectSnapshot, VectorSink
from slotwise.processors.resolve import fact_id_for
from slotwise.streams.runtime.errors import UnsupportedCommand
from slotwise.streams.runtime.metrics import DECISIONS, STAGE_SECONDS
from slotwise.streams.write.fenced import Decided, apply_fenced
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.outbound import Outbound, record_message
from slotwise.topics.records import CandidateFact, Command, Fact, Observation
from slotwise.topics.tracing import stage

__all__ = ["CommandHandler", "OutputsObserver", "WritePath"]


# One command kind's handler: it applies the command idempotently (by its
# command_id) through the subject's state, and returns the messages to publish.
CommandHandler = Callable[[Command], Awaitable[tuple[Outbound, ...]]]
OutputsObserver = Callable[[CandidateFact, StoredOutputs], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class WritePath:
    extractor: Extractor
    # A Cascade, or a cascade built on one (cold tier, review guards).
    cascade: Resolver
    store: StateStore
    vectors: VectorSink
    now: Callable[[], datetime]
    # Handlers of the lifecycle commands (erase, forget, review, ...), by kind.
    commands: Mapping[str, CommandHandler] = field(default_factory=dict)
    # Called with each candidate's outputs, fresh or replayed, before they are returned:
    # the review store files REVIEW items here (streams/commands/apply.py; idempotent).
    observers: tuple[OutputsObserver, ...] = ()

    async def on_observation(self, observation: Observation) -> tuple[Outbound, ...]:
        started = time.perf_counter()
        with stage("extract"):
            extracted = await self.extractor.extract(observation)
        STAGE_SECONDS.labels("extract").observe(time.perf_counter() - started)
        subject = observation.subject_id
        marker = Command(
            command_id=stable_id("watermark", observation.observation_id),
            subject_id=subject,
            command="watermark",
            # Deterministic, so a re-extraction after a crash emits the same marker.
            issued_at=observation.observed_at,
            observation_id=observation.observation_id,
        )
        return (
            *(record_message("candidates", subject, record) for record in extracted),
            record_message("candidates", subject, marker),
        )

    async def on_candidate(self, candidate: CandidateFact) -> tuple[Outbound, ...]:
        outputs = await self._decide(candidate)
        for observer in self.observers:
            await observer(candidate, outputs)
        self.vectors.add(outputs.vectors)
        return outputs.messages

    async def on_command(self, command: Command) -> tuple[Outbound, ...]:
        if command.command == "watermark":
            return await self._watermark(command)
        handler = self.commands.get(command.command)
        if handler is None:
            raise UnsupportedCommand(f"no handler for {command.command!r} commands in this worker")
        return await handler(command)

    async def _watermark(self, command: Command) -> tuple[Outbound, ...]:
        # Every candidate of the observation precedes it in the log, so applying it
        # publishes read-your-writes.
        subject = command.subject_id

        async def decide(_: SubjectSnapshot) -> Decided:
            return Decided((), StoredOutputs.of(()))

        await apply_fenced(
            self.store,
            subject,
            command.command_id,
            snapshot=lambda: self.store.snapshot(subject, command.command_id),
            decide=decide,
            now=self.now,
            observation_id=command.observation_id,
        )
        return ()

    async def _decide(self, candidate: CandidateFact) -> StoredOutputs:
        async def decide(seen: SubjectSnapshot) -> _Resolved:
            started = time.perf_counter()
            with stage("resolve"):
                resolution = await self.cascade.resolve(candidate, reader=seen)
            STAGE_SECONDS.labels("resolve").observe(time.perf_counter() - started)
            return _Resolved.of(resolution)

        applied = await apply_fenced(
            self.store,
            candidate.subject_id,
            candidate.candidate_id,
            snapshot=lambda: self._snapshot(candidate),
            decide=decide,
            now=self.now,
            around_apply=_timed_apply,
        )
        if applied.decided is not None:
            resolution = applied.decided.resolution
            DECISIONS.labels(resolution.decision.value, resolution.decided_by).inc()
        return applied.outputs

    async def _snapshot(self, candidate: CandidateFact) -> SubjectSnapshot:
        started = time.perf_counter()
        try:
            with stage("lookup"):
                return await self.store.snapshot(
                    candidate.subject_id,
                    candidate.candidate_id,
                    own_fact_id=fact_id_for(candidate),
                    attribute=candidate.attribute,
                )
        finally:
            STAGE_SECONDS.labels("lookup").observe(time.perf_counter() - started)


@dataclass(frozen=True, slots=True)
class _Resolved:
    """A candidate's resolution and its outputs, as the apply loop writes them."""

    resolution: Resolution
    outputs: StoredOutputs

    @classmethod
    def of(cls, resolution: Resolution) -> _Resolved:
        outputs = StoredOutputs.of(
            _messages(resolution),
            resolution.vector_rows,
            decision=resolution.decision.value,
            reason=resolution.reason,
        )
        return cls(resolution, outputs)

    @property
    def facts(self) -> Sequence[Fact]:
        return self.resolution.facts


@contextmanager
def _timed_apply() -> Iterator[None]:
    started = time.perf_counter()
    try:
        with stage("apply"):
            yield
    finally:
        STAGE_SECONDS.labels("apply").observe(time.perf_counter() - started)


def _messages(resolution: Resolution) -> list[Outbound]:
    messages = [record_message("facts", fact.fact_id, fact) for fact in resolution.facts]
    messages += [
        record_message("supersessions", event.subject_id, event)
        for event in resolution.supersessions
    ]
    if resolution.review is not None:
        messages.append(record_message("review", resolution.review.subject_id, resolution.review))
    messages += [record_message("candidates", c.subject_id, c) for c in resolution.commands]
    return messages
