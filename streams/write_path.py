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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from processors.cascade import Cascade
from processors.model import Resolution, stable_id
from processors.ports import Extractor
from processors.resolve import fact_id_for
from sinks.milvus_index import MilvusIndex
from sinks.redis_store import RedisStore, Snapshot
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
        outputs = await self._decide(candidate)
        self.index.add(outputs.vectors)
        return outputs.messages

    async def on_command(self, command: Command) -> tuple[Outbound, ...]:
        # The only command so far is the watermark: every candidate of the
        # observation precedes it in the log, so applying it publishes read-your-writes.
        subject = command.subject_id
        empty = StoredOutputs.of(()).encode()
        for _ in range(_MAX_STALE_RETRIES):
            seen = await self.store.snapshot(subject, command.command_id)
            if seen.stored is not None:
                return ()
            outcome = await self.store.apply(
                subject,
                command.command_id,
                expected_version=seen.version,
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
            seen = await self._snapshot(candidate)
            if seen.stored is not None:
                return StoredOutputs.decode(seen.stored)
            started = time.perf_counter()
            resolution = await self.cascade.resolve(candidate, reader=seen)
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
                expected_version=seen.version,
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

    async def _snapshot(self, candidate: CandidateFact) -> Snapshot:
        started = time.perf_counter()
        try:
            return await self.store.snapshot(
                candidate.subject_id,
                candidate.candidate_id,
                own_fact_id=fact_id_for(candidate),
                attribute=candidate.attribute,
            )
        finally:
            STAGE_SECONDS.labels("lookup").observe(time.perf_counter() - started)


def _messages(resolution: Resolution) -> list[Outbound]:
    messages = [record_message("facts", fact.fact_id, fact) for fact in resolution.facts]
    messages += [
        record_message("supersessions", event.subject_id, event)
        for event in resolution.supersessions
    ]
    if resolution.review is not None:
        messages.append(record_message("review", resolution.review.subject_id, resolution.review))
    return messages
