"""The erasure scenario of ``python -m slotwise.loadtest``: erase a big subject while others write.

    python -m slotwise.loadtest erasure --runs 1 --count 10000

1. One subject is given ``--count`` facts (default 10,000): structured
   candidates over the single-valued, normal-stakes attributes, each a new
   value that supersedes the last, so the subject ends with that many facts
   (history and current) and as many vector rows. One worker, offline models.
2. Meanwhile and after, other subjects' chat observations arrive at a steady
   rate (``--rate``-like constant below; ``--subjects`` of them), extracted by
   the rules; each one's produce → applied latency is noted from Redis's
   watermark publications, as ``latency.py`` measures it.
3. After a baseline window, the erase command is published; the erase time
   is from publishing it to its attestation being committed on the erasures
   topic (``read_committed``), i.e. when a subscriber could read the proof.

Figures: the erase time, what the attestation says (verified, counts), and
the other subjects' applied p50/p95/p99 in the baseline window and while the
erasure ran.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from confluent_kafka import Consumer, TopicPartition

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.loadtest.measure import latencies
from slotwise.loadtest.producer import PublishReport, publish
from slotwise.loadtest.results import Figure
from slotwise.loadtest.runner import Bench, BenchError, WatermarkListener, metric_total
from slotwise.loadtest.scenarios import SCHEMA, Follower, Options, RunResult, preload
from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.topics.codec import decode_record, encode_record
from slotwise.topics.records import CandidateFact, Command, ErasureAttestation, Observation

__all__ = ["erasure"]

_RATE = 10.0  # other subjects' observations per second
_BASELINE_S = 30.0
_TAIL_S = 5.0
_T0 = datetime(2026, 1, 1, tzinfo=UTC)
_SUM = "slotwise_stage_seconds_sum"
# The erasure's stages as the worker times them (streams/commands/erase.py).
_STAGES = ("erase_plan", "erase_vectors", "erase_redis", "erase_checks")


def erasure(options: Options) -> RunResult:
    count, subjects = options.sized(10_000, 500)
    victim = f"victim-{uuid.uuid4().hex[:8]}"
    with Bench(options.settings, options.workdir, options.partitions) as bench:
        worker = bench.worker(env=options.worker_env())
        worker.wait_healthy()
        topic = bench.catalogue.candidates
        preload(bench, topic, _facts_of(victim, count), count, progress=options.progress)
        Follower(lambda: bench.committed_count(topic), [worker]).until(count, options.deadline_s)
        marks = WatermarkListener(options.settings.redis_url, bench.redis_prefix).start()
        attested = _Attestations(bench)
        stop = threading.Event()
        background: list[PublishReport] = []
        others = threading.Thread(
            target=lambda: background.append(
                publish(
                    _chat(options, subjects, stop),
                    options.settings.librdkafka(),
                    bench.catalogue.observations,
                    rate=_RATE,
                    progress=False,
                )
            ),
            name="other-subjects",
        )
        others.start()
        try:
            time.sleep(_BASELINE_S)
            command = Command(
                command_id=str(uuid.uuid4()),
                subject_id=victim,
                command="erase",
                issued_at=datetime.now(UTC),
                reason="benchmark",
            )
            erase_at = _send(bench, command)
            found, done_at = attested.wait(command.command_id, options.deadline_s)
            time.sleep(_TAIL_S)
            metrics = worker.metrics()
        finally:
            stop.set()
            others.join(120)
            attested.close()
            marks.stop()
    if not background:
        raise BenchError("the other subjects' producer did not finish")
    produced = background[0].produced_at
    warm = min(produced.values(), default=erase_at) + 5.0
    before = {k: t for k, t in produced.items() if warm <= t < erase_at}
    during = {k: t for k, t in produced.items() if erase_at <= t <= done_at}
    milvus = sum(v for k, v in found.deleted.items() if k.startswith("milvus:"))
    return RunResult(
        [
            Figure("facts of the erased subject", found.deleted.get("redis:facts", 0), "facts"),
            Figure("vector rows deleted", milvus, "rows"),
            Figure("erase → verified attestation", done_at - erase_at, "s"),
            Figure("verified", int(found.verified), "1 = yes"),
            Figure("checks made", len(found.checks), "checks"),
            *(
                Figure(f"stage: {stage}", metric_total(metrics, _SUM, stage=stage), "s")
                for stage in _STAGES
            ),
            Figure("other subjects' rate", _RATE, "observations/s"),
            *latencies(before, marks.seen).figures("others before: produce → applied"),
            *latencies(during, marks.seen).figures("others during: produce → applied"),
        ],
        {"attestation": encode_record(found).decode()},
    )


def _facts_of(subject: str, count: int) -> Iterator[CandidateFact]:
    """``count`` facts of one subject, each superseding the last of its attribute."""
    attributes = [s.name for s in SCHEMA if s.single_valued and not s.high_stakes]
    for i in range(count):
        attribute = attributes[i % len(attributes)]
        value = f"{attribute}-{i}"
        yield CandidateFact(
            candidate_id=str(uuid.uuid4()),
            subject_id=subject,
            attribute=attribute,
            value=value,
            text=f"User's {attribute} is {value}.",
            observed_at=_T0 + timedelta(minutes=i),
            confidence=0.9,
        )


def _chat(options: Options, subjects: int, stop: threading.Event) -> Iterator[Observation]:
    config = WorkloadConfig(
        subjects=subjects,
        count=10_000_000,
        seed=options.seed + options.run,
        subject_prefix=f"e{uuid.uuid4().hex[:6]}",
    )
    for write in generate(config, SCHEMA):
        if stop.is_set():
            return
        yield write.observation()


def _send(bench: Bench, command: Command) -> float:
    producer = idempotent_producer(bench.settings.librdkafka())
    sent_at = time.time()
    producer.produce(
        bench.catalogue.candidates, key=command.subject_id.encode(), value=encode_record(command)
    )
    if producer.flush(30):
        raise BenchError("the erase command was not delivered")
    return sent_at


class _Attestations:
    """The erasures topic, read_committed, from its current end."""

    def __init__(self, bench: Bench) -> None:
        topic = bench.catalogue.erasures
        self._consumer = Consumer(
            bench.settings.librdkafka(
                {
                    "group.id": f"bench-erasures-{uuid.uuid4().hex[:8]}",
                    "enable.auto.commit": False,
                    "isolation.level": "read_committed",
                }
            )
        )
        self._consumer.assign([TopicPartition(topic, p, 0) for p in range(bench.partitions)])

    def wait(self, command_id: str, deadline_s: float) -> tuple[ErasureAttestation, float]:
        give_up = time.monotonic() + deadline_s
        while time.monotonic() < give_up:
            message = self._consumer.poll(0.05)
            if message is None or message.error() is not None:
                continue
            record = decode_record(message.value(), expect=(ErasureAttestation,))
            if isinstance(record, ErasureAttestation) and record.command_id == command_id:
                return record, time.time()
        raise BenchError(f"no attestation for {command_id} within {deadline_s:.0f} s")

    def close(self) -> None:
        self._consumer.close()
