"""What the worker does with one record: observation → candidates; candidate → state.

A candidate is decided once. Its state change and its outputs (the messages to
publish, the vector rows to index) are stored atomically in Redis under the
candidate's id; a replay of an applied candidate reads them back instead of
deciding again, so it re-emits the same messages and re-indexes the same rows.
A decision computed against a state that moved meanwhile (a zombie worker after
a rebalance) is refused by the store's version check and computed again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sinks.milvus_index import MilvusIndex

from processors.cascade import Cascade
from processors.model import Resolution, stable_id
from processors.ports import Extractor
from sinks.redis_store import RedisStore
from streams.metrics import DECISIONS, STAGE_SECONDS
from topics.outbound import Outbound, StoredOutputs, record_message
from topics.records import CandidateFact, Command, Observation

__all__ = ["StateMoved", "WritePath"]

_MAX_STALE_RETRIES = 8


class StateMoved(RuntimeError):
    """The subject's state kept moving under the decision: another writer is active."""


@dataclass(frozen=True, slots=True)
class WritePath:
    extractor: Extractor
    cascade: Cascade
    store: RedisStore
    index: MilvusIndex
    now: Callable[[], datetime]

    async def on_observation(self, observation: Observation) -> tuple[Outbound, ...]:
        started = time.perf_counter()
        candidates = await self.extractor.extract(observation)
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
            *(record_message("candidates", subject, c) for c in candidates),
            record_message("candidates", subject, marker),
        )

    async def on_candidate(self, candidate: CandidateFact) -> tuple[Outbound, ...]:
        subject = candidate.subject_id
        stored = await self.store.applied(subject, candidate.candidate_id)
        outputs = (
            StoredOutputs.decode(stored) if stored is not None else await self._decide(candidate)
        )
        self.index.add(outputs.vectors)
        return outputs.messages

    async def on_command(self, command: Command) -> tuple[Outbound, ...]:
        # The only command so far is the watermark: every candidate of the
        # observation precedes it in the log, so applying it publishes read-your-writes.
        subject = command.subject_id
        if await self.store.applied(subject, command.command_id) is not None:
            return ()
        empty = StoredOutputs.of(()).encode()
        for _ in range(_MAX_STALE_RETRIES):
            outcome = await self.store.apply(
                subject,
                command.command_id,
                expected_version=await self.store.version(subject),
                facts=(),
                outputs=empty,
                observation_id=command.observation_id,
                now=self.now(),
            )
            if not outcome.stale:
                return ()
        raise StateMoved(f"subject {subject!r} kept changing while applying {command.command_id}")

    async def _decide(self, candidate: CandidateFact) -> StoredOutputs:
        subject = candidate.subject_id
        for _ in range(_MAX_STALE_RETRIES):
            version = await self.store.version(subject)
            started = time.perf_counter()
            resolution = await self.cascade.resolve(candidate)
            STAGE_SECONDS.labels("resolve").observe(time.perf_counter() - started)
            outputs = StoredOutputs.of(
                _messages(resolution),
                resolution.vector_rows,
                decision=resolution.decision.value,
                reason=resolution.reason,
            )
            started = time.perf_counter()
            outcome = await self.store.apply(
                subject,
                candidate.candidate_id,
                expected_version=version,
                facts=resolution.facts,
                outputs=outputs.encode(),
                now=self.now(),
            )
            STAGE_SECONDS.labels("apply").observe(time.perf_counter() - started)
            if outcome.stale:
                continue
            if outcome.stored is not None:
                return StoredOutputs.decode(outcome.stored)
            DECISIONS.labels(resolution.decision.value, resolution.decided_by).inc()
            return outputs
        raise StateMoved(
            f"subject {subject!r} kept changing while deciding {candidate.candidate_id}"
        )


def _messages(resolution: Resolution) -> list[Outbound]:
    messages = [record_message("facts", fact.fact_id, fact) for fact in resolution.facts]
    messages += [
        record_message("supersessions", event.subject_id, event)
        for event in resolution.supersessions
    ]
    if resolution.review is not None:
        messages.append(record_message("review", resolution.review.subject_id, resolution.review))
    return messages
