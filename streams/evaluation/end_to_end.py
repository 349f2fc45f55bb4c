"""``slotwise eval --end-to-end``: every pair through real topics and a running worker.

So that what is measured is what ships: a namespace of its own (topics, Redis
prefix, Milvus collections, consumer group) on the configured stack, one worker
process started with the same settings, and per pair a subject of its own. The
incumbent is published as the candidate an importer would send, once per time it
was said (so a fact said twice arrives re-confirmed once, as it would be); then
the turn as an observation. When the observation's watermark is applied
(read-your-writes), the decision is read back from Redis (the subject's facts
with their history) and, at the end, from the supersession, review and
candidates topics (an erase is a command on the candidates topic). Everything
the run created is deleted afterwards.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition

from slotwise.processors.model import stable_id
from slotwise.processors.resolve import fact_id_for
from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.streams.config import Settings
from slotwise.streams.dev.testing import WorkerProcess, committed_offsets, drop_deployment
from slotwise.streams.evaluation.data import Pair, subject_of, turn_observation
from slotwise.streams.evaluation.offline import Extracted, PairOutcome, Stages
from slotwise.streams.read.store import open_store
from slotwise.topics.codec import decode_record, encode_record
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import (
    CandidateFact,
    Command,
    Fact,
    Observation,
    ReviewItem,
    SupersessionEvent,
)

__all__ = ["EndToEndError", "replay"]

PARTITIONS = 3
APPLY_TIMEOUT_S = 120.0
INCUMBENT_CONFIDENCE = 0.9
IDLE_S = 2.0  # a committed topic read to its end: nothing new for this long


class EndToEndError(SlotwiseError, RuntimeError):
    """The worker did not apply a pair in time, or the stack is not there."""


def _incumbent_candidates(pair: Pair, subject: str) -> list[CandidateFact]:
    held = pair.incumbent
    return [
        CandidateFact(
            schema="candidate/1",
            candidate_id=stable_id("eval-incumbent", subject, str(i)),
            subject_id=subject,
            attribute=held.attribute,
            value=held.value,
            text=held.text,
            observed_at=held.observed_at,
            valid_from=held.observed_at,
            source=held.source,
            confidence=INCUMBENT_CONFIDENCE,
            importance=0.5,
            observation_id=stable_id("eval-incumbent-observation", subject),
        )
        for i in range(held.verification_count)
    ]


def replay(
    base: Settings,
    stages: Stages,
    pairs: Sequence[Pair],
    progress: Callable[[], None] | None = None,
) -> list[PairOutcome]:
    """Run ``pairs`` through a fresh deployment on ``base``'s stack; always clean up."""
    namespace = f"eval-{uuid.uuid4().hex[:8]}"
    settings = base.in_namespace(namespace).model_copy(update={"partitions": PARTITIONS})
    logs = Path(tempfile.mkdtemp(prefix="slotwise-eval-"))
    worker = WorkerProcess(settings, "eval", logs / "worker.log")
    try:
        ensure_topics(settings.librdkafka(), settings.catalogue())
        worker.start()
        worker.wait_healthy()
        return asyncio.run(
            _run(settings, stages, pairs, namespace=namespace, worker=worker, progress=progress)
        )
    finally:
        worker.stop()
        drop_deployment(settings)


async def _run(
    settings: Settings,
    stages: Stages,
    pairs: Sequence[Pair],
    *,
    namespace: str,
    worker: WorkerProcess,
    progress: Callable[[], None] | None,
) -> list[PairOutcome]:
    catalogue = settings.catalogue()
    producer = idempotent_producer(settings.librdkafka())
    subjects = {p.id: subject_of(p.id, namespace) for p in pairs}
    observations: dict[str, Observation] = {}
    for pair in pairs:
        subject = subjects[pair.id]
        for candidate in _incumbent_candidates(pair, subject):
            producer.produce(catalogue.candidates, encode_record(candidate), subject.encode())
        observation = turn_observation(
            pair.id, pair.turn.text, pair.turn.observed_at, subject_id=subject
        )
        observations[pair.id] = observation
        producer.produce(catalogue.observations, encode_record(observation), subject.encode())
        producer.poll(0)
    if producer.flush(60):
        raise EndToEndError("the pairs could not all be published")
    store = open_store(settings)
    facts: dict[str, list[Fact]] = {}
    try:
        for pair in pairs:
            subject, observation = subjects[pair.id], observations[pair.id]
            if not await store.wait_for_observation(
                subject, observation.observation_id, APPLY_TIMEOUT_S
            ):
                worker.check_alive()
                raise EndToEndError(
                    f"{pair.id} not applied in {APPLY_TIMEOUT_S:.0f} s:\n{worker.log_tail()}"
                )
            facts[pair.id] = await store.facts(subject, include_history=True)
            if progress is not None:
                progress()
    finally:
        await store.close()
    _wait_committed(settings, catalogue.candidates)
    topics = (catalogue.supersessions, catalogue.review, catalogue.candidates)
    records = _read_topics(settings, topics, set(subjects.values()))
    return [
        _outcome(
            pair,
            subjects[pair.id],
            observations[pair.id],
            facts[pair.id],
            records=records,
            stages=stages,
        )
        for pair in pairs
    ]


def _wait_committed(settings: Settings, topic: str, timeout: float = APPLY_TIMEOUT_S) -> None:
    """Until the worker has committed the whole candidates topic, so every output of every
    decision is in a committed transaction (a decision is in Redis before its commit)."""
    probe = Consumer(settings.librdkafka({"group.id": f"{settings.group_id}-probe"}))
    try:
        deadline = time.monotonic() + timeout
        steady, last = 0, None
        while time.monotonic() < deadline:
            ends = {
                p: probe.get_watermark_offsets(TopicPartition(topic, p), 10)[1]
                for p in range(settings.partitions)
            }
            done = committed_offsets(settings, settings.group_id, topic, settings.partitions)
            # The last offset of a transactional topic can be a commit marker, never consumed.
            caught_up = all(done.get(p, -1) >= end - 1 for p, end in ends.items() if end > 0)
            steady = steady + 1 if caught_up and done == last else 0
            if steady >= 3:
                return
            last = done
            time.sleep(0.5)
        raise EndToEndError(f"the worker did not commit {topic} within {timeout:.0f} s")
    finally:
        probe.close()


def _read_topics(
    settings: Settings, topics: Sequence[str], subjects: set[str]
) -> dict[str, list[object]]:
    """Every committed record of ``topics`` for ``subjects``, by subject."""
    consumer = Consumer(
        settings.librdkafka(
            {
                "group.id": f"{settings.group_id}-reader",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
            }
        )
    )
    found: dict[str, list[object]] = defaultdict(list)
    try:
        consumer.assign(
            [TopicPartition(t, p, 0) for t in topics for p in range(settings.partitions)]
        )
        last = time.monotonic()
        while time.monotonic() - last < IDLE_S:
            message = consumer.poll(0.2)
            if message is None or message.error() is not None:
                continue
            last = time.monotonic()
            try:
                record = decode_record(message.value())
            except SlotwiseError:
                continue
            subject = getattr(record, "subject_id", None)
            if subject in subjects:
                found[subject].append(record)
    finally:
        consumer.close()
    return found


def _outcome(
    pair: Pair,
    subject: str,
    observation: Observation,
    facts: Sequence[Fact],
    *,
    records: dict[str, list[object]],
    stages: Stages,
) -> PairOutcome:
    first = _incumbent_candidates(pair, subject)[0]
    incumbent_id = fact_id_for(first)
    incumbent = next((f for f in facts if f.fact_id == incumbent_id), None)
    mine = [f for f in facts if f.observation_id == observation.observation_id]
    events = [r for r in records.get(subject, []) if isinstance(r, SupersessionEvent)]
    events = [e for e in events if e.observation_id == observation.observation_id]
    reviews = [
        r
        for r in records.get(subject, [])
        if isinstance(r, ReviewItem) and r.candidate.observation_id == observation.observation_id
    ]
    erase = tuple(
        r.attribute
        for r in records.get(subject, [])
        if isinstance(r, Command)
        and r.command == "erase"
        and r.observation_id == observation.observation_id
    )
    said: list[Fact | CandidateFact] = [*mine, *(r.candidate for r in reviews)]
    candidates = tuple(Extracted(c.attribute, _shown(c.value), c.text) for c in said)
    supersedes = any(e.old_fact_id == incumbent_id for e in events)
    decision, chosen, reason = _decision(
        pair, incumbent, mine, events, reviews, incumbent_id=incumbent_id
    )
    texts = [c.text for c in said] or [pair.turn.text]
    cosine = max(_cosine(stages, pair.incumbent.text, t) for t in texts)
    exact = pair.incumbent.attribute is not None and any(
        c.attribute == pair.incumbent.attribute for c in said
    )
    return PairOutcome(
        pair.id,
        "erase" if erase and not said else decision,
        None if chosen is None else _shown(chosen[1]),
        None if chosen is None else chosen[0],
        "end-to-end",
        reason if not (erase and not said) else "erase command on the candidates topic",
        candidates,
        erase,
        exact,
        cosine,
        None,
        supersedes,
        len(events),
    )


def _decision(
    pair: Pair,
    incumbent: Fact | None,
    mine: Sequence[Fact],
    events: Sequence[SupersessionEvent],
    reviews: Sequence[ReviewItem],
    *,
    incumbent_id: str,
) -> tuple[str, tuple[str | None, object] | None, str]:
    if any(e.old_fact_id == incumbent_id for e in events):
        event = next(e for e in events if e.old_fact_id == incumbent_id)
        return "SUPERSEDE", (event.attribute, event.new_value), event.reason
    if reviews:
        item = reviews[0]
        return "REVIEW", (item.candidate.attribute, item.candidate.value), item.reason
    confirmations = pair.incumbent.verification_count - 1
    if incumbent is not None and incumbent.verification_count > confirmations:
        changed = incumbent.text != pair.incumbent.text
        kind = "UPDATE" if changed else "NOOP"
        return kind, (incumbent.attribute, incumbent.value), f"incumbent {kind.lower()}d in Redis"
    if mine:
        wanted = [pair.incumbent.attribute] + ([pair.expected.attribute] if pair.expected else [])
        fact = next(
            (f for a in wanted for f in mine if a is not None and f.attribute == a), mine[0]
        )
        return "ADD", (fact.attribute, fact.value), f"new {fact.status} fact in Redis"
    return "none", None, "no fact, review or supersession for the turn"


def _shown(value: object) -> str | None:
    return None if value is None else str(value)


def _cosine(stages: Stages, a: str, b: str) -> float:
    left, right = stages.embedder.embed([a, b])
    return float(sum(x * y for x, y in zip(left, right, strict=True)))
