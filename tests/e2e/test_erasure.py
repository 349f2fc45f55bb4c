"""Verified erasure end to end: real Kafka, Redis, Milvus Lite and worker processes.

``SLOTWISE_ERASE_E2E_FACTS`` sizes the subject the kill -9 test erases (300).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
import redis
from confluent_kafka import Producer
from pymilvus import MilvusClient

from slotwise.models.embedders import DEFAULT_MODEL
from slotwise.processors.resolve import fact_id_for
from slotwise.sinks.milvus.collections import (
    GRPC_OPTIONS,
    cold_collection_name,
    create_collection,
    subject_collections,
)
from slotwise.sinks.milvus.engine import write_rows
from slotwise.topics.codec import decode_record, encode_record
from slotwise.topics.records import (
    CandidateFact,
    Command,
    ErasureAttestation,
    Fact,
    Observation,
)
from tests.e2e.harness import Pipeline, store_call

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

KILL_FACTS = int(os.environ.get("SLOTWISE_ERASE_E2E_FACTS", "300"))
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


# -- helpers --------------------------------------------------------------------


def candidate(
    subject: str, attribute: str | None, value: str, day: int, **extra: object
) -> CandidateFact:
    return CandidateFact(
        candidate_id=str(uuid.uuid4()),
        subject_id=subject,
        attribute=attribute,
        value=value if attribute else None,
        text=f"User's {attribute} is {value}." if attribute else value,
        observed_at=T0 + timedelta(days=day),
        confidence=0.9,
        **extra,  # type: ignore[arg-type]
    )


def erase_command(subject: str, **scope: str) -> Command:
    return Command(
        command_id=str(uuid.uuid4()),
        subject_id=subject,
        command="erase",
        issued_at=datetime.now(UTC),
        reason="e2e",
        **scope,  # type: ignore[arg-type]
    )


def apply(pipeline: Pipeline, records: Sequence[CandidateFact | Command]) -> None:
    ends = pipeline.publish(pipeline.catalogue.candidates, records)
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout=300)


def facts(pipeline: Pipeline, subject: str) -> list[Fact]:
    found = store_call(pipeline, "facts", subject, include_history=True)
    assert isinstance(found, list)
    return found


def attestations(pipeline: Pipeline, subject: str) -> list[ErasureAttestation]:
    found = []
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.erasures):
        if key == subject.encode():
            record = decode_record(value, expect=(ErasureAttestation,))
            assert isinstance(record, ErasureAttestation)
            found.append(record)
    return found


def latest_facts(pipeline: Pipeline) -> dict[str, bytes | None]:
    latest: dict[str, bytes | None] = {}
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.facts):
        latest[(key or b"").decode()] = value
    return latest


def milvus_rows(pipeline: Pipeline, subject: str) -> dict[str, set[str]]:
    """Fact ids of the subject's rows, per collection of the pipeline's prefix."""
    client = MilvusClient(uri=pipeline.settings.milvus_uri, grpc_options=GRPC_OPTIONS)
    prefix = pipeline.deployment.milvus_collection_prefix
    try:
        found = {}
        for name in subject_collections(client, prefix):
            client.load_collection(name)
            rows = client.query(
                name, filter=f'subject_id == "{subject}"', output_fields=["fact_id"], limit=16384
            )
            found[name] = {str(r["fact_id"]) for r in rows}
        return found
    finally:
        client.close()


def cli(pipeline: Pipeline, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slotwise.streams", *args],
        env={**os.environ, **pipeline.env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def wait_for_attestation(
    pipeline: Pipeline, subject: str, command_id: str, timeout: float = 300
) -> ErasureAttestation:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for attested in attestations(pipeline, subject):
            if attested.command_id == command_id:
                return attested
        time.sleep(1)
    raise TimeoutError(f"no attestation for {command_id}:\n{pipeline.diagnose()}")


def extra_collections(pipeline: Pipeline, rows: dict[str, list[str]]) -> tuple[str, str]:
    """A cold tier and a newer embedding model's collection, as forgetting and a migration
    would add them, holding ``rows`` (subject → fact ids). Their names follow the scheme;
    nothing tells the worker about them."""
    prefix = pipeline.deployment.milvus_collection_prefix
    client = MilvusClient(uri=pipeline.settings.milvus_uri, grpc_options=GRPC_OPTIONS)
    # The cold tier is the worker's model's (a new store's default); the newer model is not.
    cold, newer = cold_collection_name(prefix, DEFAULT_MODEL), f"{prefix}_next_model_v2_20991231"
    try:
        for name, model, dim in ((cold, DEFAULT_MODEL, 384), (newer, "next-model-v2", 8)):
            if not client.has_collection(name):
                create_collection(client, name, model=model, dimension=dim, timeout_s=30)
            client.load_collection(name)
            data = [
                {"fact_id": fid, "subject_id": subject, "embedding_model": model,
                 "category": None, "text": f"copy of {fid}", "vector": [0.1] * dim}
                for subject, ids in rows.items() for fid in ids
            ]  # fmt: skip
            write_rows(client, name, data, timeout_s=30)  # as each engine accepts it
            client.flush(name)
    finally:
        client.close()
    return cold, newer


# -- the tests ------------------------------------------------------------------


def test_a_subject_erase_leaves_nothing_on_any_read_path_and_others_untouched(
    pipeline: Pipeline,
) -> None:
    doomed, other = f"ana-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    writes = []
    for subject in (doomed, other):
        writes += [
            candidate(subject, "employer", "Datadog", 1),
            candidate(subject, "employer", "Stripe", 5),  # supersedes Datadog
            candidate(subject, "email", "ana@example.com", 1),
            candidate(subject, "email", "ana@example.com", 2),  # re-confirmed
            candidate(subject, "email", "ana@newmail.org", 3),  # high stakes: review
            candidate(subject, "languages", "Spanish", 1),
            candidate(subject, None, "User visited Lisbon in March.", 4),  # the vector path
        ]
    pipeline.worker().wait_healthy()
    apply(pipeline, writes)
    before = facts(pipeline, doomed)
    assert {f.status for f in before} == {"current", "superseded"}
    kept_facts = facts(pipeline, other)
    cold, newer = extra_collections(
        pipeline, {s: [f.fact_id for f in facts(pipeline, s)][:2] for s in (doomed, other)}
    )
    other_rows = milvus_rows(pipeline, other)

    done = cli(pipeline, "erase", doomed, "--reason", "GDPR art. 17", "--wait", "--json")
    assert done.returncode == 0, done.stderr + done.stdout
    attested = decode_record(done.stdout.strip().splitlines()[-1].encode())
    assert isinstance(attested, ErasureAttestation)
    (pipeline.log_dir / "attestation.json").write_text(done.stdout)  # beside the worker logs

    assert attested.verified and not any(attested.remaining.values())
    assert (attested.scope, attested.reason) == ("subject", "GDPR art. 17")
    assert attested.deleted["redis:facts"] == len(before) == 5
    assert attested.deleted[f"milvus:{cold}"] == attested.deleted[f"milvus:{newer}"] == 2
    assert {c.store for c in attested.checks} >= {"redis", f"milvus:{cold}", f"milvus:{newer}"}
    assert {r.store.split(".")[-2] for r in attested.retained} >= {"candidates", "observations"}
    # No read path finds anything of the subject.
    assert facts(pipeline, doomed) == []
    shown = cli(pipeline, "facts", doomed, "--history", "--json")
    assert shown.returncode == 0 and shown.stdout.strip() == ""
    assert all(not ids for ids in milvus_rows(pipeline, doomed).values())
    latest = latest_facts(pipeline)
    assert all(latest[f.fact_id] is None for f in before), "a fact without its tombstone"
    tailed = cli(pipeline, "erasures", "tail", "--subject", doomed, "--from-beginning",
                 "--timeout", "5", "--json")  # fmt: skip
    assert [decode_record(line.encode()) for line in tailed.stdout.splitlines()] == [attested]
    # The other subject is untouched, in Redis and in every collection.
    assert facts(pipeline, other) == kept_facts
    assert milvus_rows(pipeline, other) == other_rows
    assert latest[kept_facts[0].fact_id] is not None
    # Written again after the erase, the subject exists again with only the new facts.
    late = candidate(doomed, "home_city", "Porto", 9)
    apply(pipeline, [late])
    assert [f.fact_id for f in facts(pipeline, doomed)] == [fact_id_for(late)]


def test_an_erase_racing_a_burst_of_writes_erases_exactly_those_before_it(
    pipeline: Pipeline,
) -> None:
    subject = f"race-{uuid.uuid4().hex[:6]}"
    burst = [candidate(subject, "languages", f"lang-{i}", 1) for i in range(200)]
    command = erase_command(subject)
    placed: dict[str, int] = {}
    partitions: set[int] = set()

    def produce(records: Sequence[CandidateFact | Command], after: int) -> None:
        producer = Producer(
            pipeline.settings.librdkafka({"enable.idempotence": True, "linger.ms": 1})
        )
        producer.list_topics(pipeline.catalogue.candidates, timeout=10)  # connected first
        while len(placed) < after:  # the erase goes once part of the burst is on the log
            producer.poll(0.001)
        for record in records:
            rid = record.candidate_id if isinstance(record, CandidateFact) else record.command_id

            def delivered(err: object, msg: object, rid: str = rid) -> None:
                assert err is None, err
                placed[rid] = msg.offset()  # type: ignore[attr-defined]
                partitions.add(msg.partition())  # type: ignore[attr-defined]

            producer.produce(
                pipeline.catalogue.candidates,
                key=subject.encode(),
                value=encode_record(record),
                on_delivery=delivered,
            )
            producer.poll(0)
            time.sleep(0.005)
        assert producer.flush(30) == 0

    pipeline.worker().wait_healthy()
    racers = [
        threading.Thread(target=produce, args=(burst, 0)),
        threading.Thread(target=produce, args=([command], 40)),
    ]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(60)
    (partition,) = partitions
    pipeline.wait_committed(
        pipeline.catalogue.candidates, {partition: max(placed.values()) + 1}, timeout=300
    )
    after = [c for c in burst if placed[c.candidate_id] > placed[command.command_id]]
    before = [c for c in burst if placed[c.candidate_id] < placed[command.command_id]]
    assert before and after, "the erase did not land inside the burst"
    (attested,) = attestations(pipeline, subject)
    assert attested.verified and attested.deleted["redis:facts"] == len(before)
    assert {f.fact_id for f in facts(pipeline, subject)} == {fact_id_for(c) for c in after}
    # The checkpoint flushes vector rows before it commits their offsets.
    indexed = set().union(*milvus_rows(pipeline, subject).values())
    assert indexed == {fact_id_for(c) for c in after}


def test_scoped_erases_keep_the_rest_and_leave_a_consistent_chain(pipeline: Pipeline) -> None:
    subject = f"chain-{uuid.uuid4().hex[:6]}"
    a, b, c = (
        candidate(subject, "employer", v, d) for v, d in (("Acme", 1), ("Bolt", 2), ("Corp", 3))
    )
    home = candidate(subject, "home_city", "Lisbon", 1)
    speaks = candidate(subject, "languages", "Spanish", 1)
    pipeline.worker().wait_healthy()
    apply(pipeline, [a, b, c, home, speaks])

    by_attribute, by_fact = (
        erase_command(subject, attribute="home_city"),
        erase_command(subject, fact_id=fact_id_for(b)),
    )
    apply(pipeline, [by_attribute, by_fact])
    for command in (by_attribute, by_fact):
        assert wait_for_attestation(pipeline, subject, command.command_id).verified

    left = {f.value: f for f in facts(pipeline, subject)}
    assert set(left) == {"Acme", "Corp", "Spanish"}
    assert left["Acme"].superseded_by == left["Corp"].fact_id
    assert left["Corp"].supersedes == left["Acme"].fact_id and left["Corp"].status == "current"
    indexed = set().union(*milvus_rows(pipeline, subject).values())
    assert indexed == {f.fact_id for f in left.values()}
    latest = latest_facts(pipeline)
    assert latest[fact_id_for(b)] is None and latest[fact_id_for(home)] is None
    for kept in left.values():
        assert decode_record(latest[kept.fact_id]) == kept, "facts topic != Redis"


def test_a_worker_killed_mid_erasure_finishes_the_same_erasure_once(pipeline: Pipeline) -> None:
    subject = f"kill-{uuid.uuid4().hex[:6]}"
    writes = [candidate(subject, "languages", f"lang-{i}", 1) for i in range(KILL_FACTS)]
    worker = pipeline.worker("victim")
    worker.wait_healthy()
    apply(pipeline, writes)
    command = erase_command(subject)
    progress = f"{pipeline.redis_prefix}:{{{subject}}}:erasing"
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    try:
        pipeline.publish(pipeline.catalogue.candidates, [command])
        deadline = time.monotonic() + 120
        while not client.hexists(progress, command.command_id):
            assert time.monotonic() < deadline, f"the erase never began:\n{pipeline.diagnose()}"
            time.sleep(0.005)
        worker.kill()
        finished_before_kill = store_call(pipeline, "applied", subject, command.command_id)
    finally:
        client.close()
    assert finished_before_kill is None, "the kill came after the erasure had finished"
    pipeline.worker("victim").wait_healthy()  # the same replica: it fences its own leftovers

    attested = wait_for_attestation(pipeline, subject, command.command_id)
    time.sleep(3)  # a duplicate, if there were one, would be committed by now
    assert [a.command_id for a in attestations(pipeline, subject)] == [command.command_id]
    assert attested.verified, attested.remaining
    assert attested.deleted["redis:facts"] == KILL_FACTS
    assert facts(pipeline, subject) == []
    assert all(not ids for ids in milvus_rows(pipeline, subject).values())
    latest = latest_facts(pipeline)
    assert all(latest[fact_id_for(c)] is None for c in writes)


def test_deletion_intent_turns_erase_and_ambiguous_turns_erase_nothing(
    pipeline: Pipeline,
) -> None:
    subject = f"intent-{uuid.uuid4().hex[:6]}"
    texts = [
        "I'm a backend engineer at Datadog.",
        "I live in Lisbon.",
        "I forgot my password again.",  # ambiguous: a task, not a request of the memory
        "Forget it, never mind.",
        "Delete the meeting from my calendar.",
        "Please forget what I told you about my employer.",  # → erase employer
    ]
    turns = [
        Observation(observation_id=str(uuid.uuid4()), subject_id=subject, text=text,
                    observed_at=T0 + timedelta(minutes=i))
        for i, text in enumerate(texts)
    ]  # fmt: skip
    pipeline.worker().wait_healthy()
    pipeline.publish(pipeline.catalogue.observations, turns)
    assert store_call(pipeline, "wait_for_observation", subject, turns[-1].observation_id, 180.0)

    commands: Counter[str | None] = Counter()
    from_turn: list[str] = []
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.candidates):
        record = decode_record(value, expect=(CandidateFact, Command))
        if key != subject.encode():
            continue
        if isinstance(record, Command) and record.command == "erase":
            commands[record.attribute] += 1
            assert record.observation_id == turns[-1].observation_id
        if isinstance(record, CandidateFact) and record.observation_id == turns[-1].observation_id:
            from_turn.append(record.text)
    assert commands == {"employer": 1}, "one erase, from the deletion request only"
    assert from_turn == [], "a deletion request must not be stored as a fact"
    (attested,) = attestations(pipeline, subject)
    assert (attested.scope, attested.attribute, attested.verified) == (
        "attribute",
        "employer",
        True,
    )
    assert attested.deleted["redis:facts"] == 1
    assert sorted(f.attribute or "" for f in facts(pipeline, subject)) == ["home_city", "job_title"]
