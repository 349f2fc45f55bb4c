"""Forgetting end to end: real Kafka, Redis, Milvus Lite, worker processes and the CLI.

* archive → gone from default reads and from the write path's vector fetch →
  found with ``--include-archived`` and by a cold-tier search → restored (by
  ``slotwise restore`` and by a restating candidate, never duplicated), each
  fact's vector in exactly one tier after every step;
* a pass racing a burst of writes for the same subjects loses no write and
  archives exactly what the same pass archives with no writes beside it;
* ``kill -9`` mid-pass, restart: the state of an uninterrupted pass.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
import redis
from pymilvus import MilvusClient

from slotwise.models.embedders import DEFAULT_MODEL
from slotwise.processors.forgetting import ForgetPolicy
from slotwise.processors.resolve import fact_id_for
from slotwise.sinks.milvus.collections import READ_CONSISTENCY, cold_collection_name
from slotwise.sinks.milvus.index import GRPC_OPTIONS
from slotwise.streams.passes.forget import forget_commands
from slotwise.topics.codec import decode_record
from slotwise.topics.records import CandidateFact, Command, Fact, ReviewItem
from tests.e2e.conftest import PipelineFactory
from tests.e2e.harness import Pipeline, assert_same_state, redis_state, store_call

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

# The worker embeds with a new store's default model: its cold tier is that model's.
MODEL = DEFAULT_MODEL
# Free text of these categories decays like events in these tests.
ENV = {"SLOTWISE_FORGET_HALF_LIVES": json.dumps({"travel": 30, "hobby": 30})}


def _candidate(subject: str, text: str, **fields: object) -> CandidateFact:
    return CandidateFact(
        candidate_id=str(uuid.uuid4()),
        subject_id=subject,
        text=text,
        observed_at=datetime(2026, 3, 1, tzinfo=UTC),
        **fields,  # type: ignore[arg-type]
    )


def _facts(pipeline: Pipeline, subject: str) -> dict[str, Fact]:
    found = store_call(pipeline, "facts", subject, include_history=True)
    assert isinstance(found, list)
    return {f.fact_id: f for f in found}


def _tiers(pipeline: Pipeline, fact_ids: Sequence[str]) -> dict[str, set[str]]:
    """Which tiers hold each fact's row, read from Milvus directly."""
    client = MilvusClient(uri=pipeline.settings.milvus_uri, grpc_options=GRPC_OPTIONS)
    prefix = pipeline.milvus_alias.removesuffix("_current")
    found: dict[str, set[str]] = {f: set() for f in fact_ids}
    try:
        for tier, name in (
            ("hot", pipeline.milvus_alias),
            ("cold", cold_collection_name(prefix, MODEL)),
        ):
            if tier == "cold" and not client.has_collection(name):
                continue
            client.load_collection(name)
            # Strong, as the code reads: a row moved a moment ago is seen where it now is.
            rows = client.get(
                name,
                ids=list(fact_ids),
                output_fields=["fact_id"],
                consistency_level=READ_CONSISTENCY,
            )
            for row in rows:
                found[row["fact_id"]].add(tier)
    finally:
        client.close()
    return found


def _one_tier_each(pipeline: Pipeline, subject: str) -> dict[str, str]:
    """Every current or archived fact's row is in exactly the tier its status names."""
    facts = {
        i: f for i, f in _facts(pipeline, subject).items() if f.status in ("current", "archived")
    }
    where = _tiers(pipeline, list(facts))
    wanted = {i: ("cold" if f.status == "archived" else "hot") for i, f in facts.items()}
    assert {i: tiers for i, tiers in where.items()} == {i: {t} for i, t in wanted.items()}
    return wanted


def _in_their_tiers(pipeline: Pipeline, subject: str) -> bool:
    try:
        _one_tier_each(pipeline, subject)
    except AssertionError:
        return False
    return True


def _cli(pipeline: Pipeline, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "slotwise.streams", *args],
        env={**os.environ, **pipeline.env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"slotwise {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


def _until(check: object, timeout: float = 90.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached in {timeout:g} s")
        time.sleep(0.3)


def test_archive_find_restore_and_restate_with_one_tier_throughout(pipeline: Pipeline) -> None:
    pipeline.extra_env.update(ENV)
    subject = f"ana-{uuid.uuid4().hex[:6]}"
    name = _candidate(subject, "User's name is Ana Souza.", attribute="name", value="Ana Souza")
    trip = _candidate(
        subject, "User is in Kyoto this week.", attribute="current_location", value="Kyoto"
    )
    job = _candidate(subject, "User works at Stripe.", attribute="employer", value="Stripe")
    visit = _candidate(subject, "User visited Kyoto in March.", category="travel")
    pipeline.worker().wait_healthy()
    ends = pipeline.publish(pipeline.catalogue.candidates, [name, trip, job, visit])
    pipeline.wait_committed(pipeline.catalogue.candidates, ends)
    ids = {c.text: fact_id_for(c) for c in (name, trip, job, visit)}
    trip_id, visit_id = ids[trip.text], ids[visit.text]
    assert set(_one_tier_each(pipeline, subject).values()) == {"hot"}

    # A read counts as an access of every fact it returns (now: the pass is 200 days on).
    assert json.loads(_cli(pipeline, "facts", subject, "--json").stdout.splitlines()[0])
    as_of = (datetime.now(UTC) + timedelta(days=200)).isoformat()
    dry = _cli(pipeline, "forget", "--subject", subject, "--as-of", as_of, "--dry-run", "--json")
    planned = {json.loads(line)["fact_id"] for line in dry.stdout.splitlines()}
    assert planned == {trip_id, visit_id}
    assert _facts(pipeline, subject)[trip_id].status == "current"  # a dry run changes nothing
    report = _cli(pipeline, "forget", "--subject", subject, "--as-of", as_of, "--wait", "--json")
    assert json.loads(report.stdout)["archived"] == 2
    facts = _facts(pipeline, subject)
    assert {i for i, f in facts.items() if f.status == "archived"} == {trip_id, visit_id}
    assert _one_tier_each(pipeline, subject) == {
        ids[name.text]: "hot",
        ids[job.text]: "hot",
        trip_id: "cold",
        visit_id: "cold",
    }
    shown = _cli(pipeline, "facts", subject, "--json").stdout
    assert trip_id not in shown and visit_id not in shown
    everything = _cli(pipeline, "facts", subject, "--include-archived", "--json").stdout
    assert trip_id in everything and visit_id in everything
    latest = {k: v for k, v, _ in pipeline.read_committed(pipeline.catalogue.facts)}
    archived_record = decode_record(latest[trip_id.encode()], expect=(Fact,))
    assert isinstance(archived_record, Fact) and archived_record.status == "archived"

    # The write path's vector fetch does not see the archived visit: a close, different
    # trip is added with no close-neighbour review naming it.
    april = _candidate(subject, "User visited Kyoto in April.", category="travel")
    ends = pipeline.publish(pipeline.catalogue.candidates, [april])
    pipeline.wait_committed(pipeline.catalogue.candidates, ends)
    reviews = [
        decode_record(v, expect=(ReviewItem,))
        for k, v, _ in pipeline.read_committed(pipeline.catalogue.review)
        if k == subject.encode()
    ]
    assert not any(isinstance(r, ReviewItem) and visit_id in r.incumbent_fact_ids for r in reviews)
    assert _facts(pipeline, subject)[fact_id_for(april)].status == "current"

    # Restored by a command: back in the hot tier, in the default reads.
    _cli(pipeline, "restore", trip_id, "--wait")
    assert _facts(pipeline, subject)[trip_id].status == "current"
    assert trip_id in _cli(pipeline, "facts", subject, "--json").stdout
    _one_tier_each(pipeline, subject)

    # Restated: NOOP + restore, not a duplicate.
    again = _candidate(subject, "User visited Kyoto in March.", category="travel")
    pipeline.publish(pipeline.catalogue.candidates, [again])
    _until(lambda: _facts(pipeline, subject)[visit_id].status == "current", what="restatement")
    # The status turns current when the restore command the restatement emitted is
    # applied; its row moves back right after, before the command commits.
    _until(lambda: _in_their_tiers(pipeline, subject), what="the restated row's move")
    facts = _facts(pipeline, subject)
    assert fact_id_for(again) not in facts
    assert [f.text for f in facts.values()].count("User visited Kyoto in March.") == 1
    assert facts[visit_id].verification_count == 1
    _one_tier_each(pipeline, subject)


# -- racing writes, crashes ---------------------------------------------------------

SUBJECTS = 24
POLICY = ForgetPolicy(threshold=0.45, budget=6)


def _seed(subject_prefix: str, *, per_subject: int = 12, seed: int = 3) -> list[CandidateFact]:
    """Facts of mixed kinds and importance: some decay past the threshold, some fall to
    the budget."""
    rng = random.Random(seed)
    attributes = ["current_location", "employer", "plan", "diet", "languages", "pets"]
    made: list[CandidateFact] = []
    for s in range(SUBJECTS):
        subject = f"{subject_prefix}-{s:03d}"
        for i in range(per_subject):
            attribute = attributes[i % len(attributes)] if i < len(attributes) else None
            made.append(
                CandidateFact(
                    candidate_id=str(uuid.UUID(int=rng.getrandbits(128))),
                    subject_id=subject,
                    attribute=attribute,
                    value=f"v{i}" if attribute else None,
                    text=f"User fact {i} of {subject}: {attribute or 'note'} {rng.random():.6f}.",
                    category=None if attribute else rng.choice(["travel", "hobby"]),
                    observed_at=datetime(2026, 1, 1, tzinfo=UTC),
                    importance=round(rng.uniform(0.3, 0.9), 2),
                )
            )
    return made


def _burst(subject_prefix: str, count: int, seed: int) -> list[CandidateFact]:
    rng = random.Random(seed)
    return [
        CandidateFact(
            candidate_id=str(uuid.uuid4()),
            subject_id=f"{subject_prefix}-{rng.randrange(SUBJECTS):03d}",
            text=f"User mentioned thing {i} {rng.random():.6f}.",
            category="hobby",
            observed_at=datetime(2026, 2, 1, tzinfo=UTC),
        )
        for i in range(count)
    ]


def _archived(pipeline: Pipeline, subjects: Sequence[str]) -> set[str]:
    return {
        f.fact_id for s in subjects for f in _facts(pipeline, s).values() if f.status == "archived"
    }


def _seeded(pipeline: Pipeline, seed: Sequence[CandidateFact], base_ms: int) -> None:
    ends = pipeline.publish(pipeline.catalogue.candidates, seed, base_timestamp_ms=base_ms)
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout=600)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_pass_racing_a_burst_of_writes_archives_the_same_and_loses_nothing(
    pipeline_factory: PipelineFactory,
) -> None:
    quiet, raced = pipeline_factory(), pipeline_factory()
    for p in (quiet, raced):
        p.extra_env.update(ENV)
    prefix = f"race-{uuid.uuid4().hex[:6]}"
    seed = _seed(prefix)
    subjects = sorted({c.subject_id for c in seed})
    # Recorded six days ago (inside the topic's retention), evaluated an hour ago: the
    # burst, recorded now, is after the evaluation time.
    base_ms = int((time.time() - 6 * 86_400) * 1000)
    as_of = datetime.now(UTC) - timedelta(hours=1)
    for p in (quiet, raced):
        p.worker().wait_healthy()
        _seeded(p, seed, base_ms)

    pass_id = str(uuid.uuid4())
    commands = forget_commands(subjects, as_of=as_of, policy=POLICY, pass_id=pass_id)
    ends = quiet.publish(quiet.catalogue.candidates, commands)
    quiet.wait_committed(quiet.catalogue.candidates, ends, timeout=600)
    expected = _archived(quiet, subjects)
    assert 0 < len(expected) < len(seed)

    burst = _burst(prefix, 600, seed=8)
    half = len(burst) // 2
    writer = threading.Thread(
        target=lambda: raced.publish(raced.catalogue.candidates, burst[half:]), daemon=True
    )
    raced.publish(raced.catalogue.candidates, burst[:half])
    writer.start()
    raced.publish(raced.catalogue.candidates, commands)
    writer.join(120)
    _until(
        lambda: all(
            store_call(raced, "applied", c.subject_id, c.command_id) is not None for c in commands
        ),
        timeout=600,
        what="the raced pass",
    )
    _until(
        lambda: all(
            store_call(raced, "applied", c.subject_id, c.candidate_id) is not None for c in burst
        ),
        timeout=600,
        what="the burst",
    )
    assert _archived(raced, subjects) == expected
    for candidate in burst:  # nothing lost: every write is stored, current
        assert _facts(raced, candidate.subject_id)[fact_id_for(candidate)].status == "current"
    for subject in subjects[:6]:
        _one_tier_each(raced, subject)


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_kill_minus_nine_mid_pass_ends_as_an_uninterrupted_pass(
    pipeline_factory: PipelineFactory,
) -> None:
    clean, crashed = pipeline_factory(), pipeline_factory()
    for p in (clean, crashed):
        p.extra_env.update(ENV)
    prefix = f"crash-{uuid.uuid4().hex[:6]}"
    seed = [c for n in range(6) for c in _seed(f"{prefix}{n}", seed=n)]
    subjects = sorted({c.subject_id for c in seed})
    base_ms = int((time.time() - 6 * 86_400) * 1000)
    as_of = datetime.now(UTC) - timedelta(hours=1)
    for p in (clean, crashed):
        p.worker("victim").wait_healthy()
        _seeded(p, seed, base_ms)
    commands = forget_commands(subjects, as_of=as_of, policy=POLICY)
    stamp = int(time.time() * 1000)

    ends = clean.publish(clean.catalogue.candidates, commands, base_timestamp_ms=stamp)
    clean.wait_committed(clean.catalogue.candidates, ends, timeout=900)

    crashed.workers[-1].kill()
    worker = crashed.worker("victim")
    # The pass is published in thirds, and the worker is killed (-9) once half of each
    # third is applied: a restarted worker applies a few dozen forget commands in a
    # fraction of a second, so only a pass not yet published in full is sure to be
    # unfinished at a kill. The records, offsets and timestamps are those of the clean run.
    bounds = [round(len(commands) * k / 3) for k in range(4)]
    crashed_ends: dict[int, int] = {}
    for first, last in itertools.pairwise(bounds):
        published = crashed.publish(
            crashed.catalogue.candidates, commands[first:last], base_timestamp_ms=stamp + first
        )
        for partition, offset in published.items():
            crashed_ends[partition] = max(crashed_ends.get(partition, 0), offset)
        _until(
            lambda mid=(first + last) // 2: _applied(crashed, commands) >= mid,
            timeout=600,
            what=f"half of the pass's commands {first}-{last}",
        )
        worker.kill()  # with the third's later commands in flight or not begun
        worker = crashed.worker("victim")
    crashed.wait_committed(crashed.catalogue.candidates, crashed_ends, timeout=900)

    assert_same_state(redis_state(crashed), redis_state(clean), ("crashed", "clean"))
    assert _milvus_rows(crashed, subjects) == _milvus_rows(clean, subjects)
    assert _latest_facts(crashed) == _latest_facts(clean)
    archived = _archived(clean, subjects)
    assert len(archived) > len(subjects)
    for subject in subjects[:: len(subjects) // 8]:
        _one_tier_each(crashed, subject)


def _applied(pipeline: Pipeline, commands: Sequence[Command]) -> int:
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    try:
        pipe = client.pipeline(transaction=False)
        for c in commands:
            pipe.hexists(f"{pipeline.redis_prefix}:{{{c.subject_id}}}:applied", c.command_id)
        return sum(bool(found) for found in pipe.execute())
    finally:
        client.close()


def _milvus_rows(pipeline: Pipeline, subjects: Sequence[str]) -> dict[str, dict[str, str]]:
    client = MilvusClient(uri=pipeline.settings.milvus_uri, grpc_options=GRPC_OPTIONS)
    prefix = pipeline.milvus_alias.removesuffix("_current")
    rows: dict[str, dict[str, str]] = {"hot": {}, "cold": {}}
    try:
        for tier, name in (
            ("hot", pipeline.milvus_alias),
            ("cold", cold_collection_name(prefix, MODEL)),
        ):
            client.load_collection(name)
            for subject in subjects:
                for row in client.query(
                    name,
                    filter=f'subject_id == "{subject}"',
                    output_fields=["fact_id", "text"],
                    limit=16384,
                ):
                    rows[tier][row["fact_id"]] = row["text"]
    finally:
        client.close()
    return rows


def _latest_facts(pipeline: Pipeline) -> dict[bytes | None, bytes | None]:
    latest: dict[bytes | None, bytes | None] = {}
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.facts, idle_s=3.0):
        latest[key] = value
    return latest
