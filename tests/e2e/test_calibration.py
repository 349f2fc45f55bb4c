"""Half-life calibration end to end: the faust app over a synthetic store with known half-lives.

The store is generated with exponential lifetimes per category (superseded
facts closed, the last of each chain still current: censored), and the
supersession events are published as the worker would. The faust app counts
them into its changelog-backed table — killed with -9 halfway and restarted,
it loses and doubles nothing — and ``slotwise calibrate`` recovers each
half-life inside the interval it reports; ``--write`` proposes a new
vocabulary version and applies nothing.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from slotwise.processors.calibration import current_half_lives
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.dev.testing import ChildProcess, committed_offsets, free_port
from slotwise.streams.passes.calibration_read import (
    CalibrationUnavailable,
    app_id,
    changelog_lifetimes,
    changelog_topic,
    fits_of,
    store_lifetimes,
)
from slotwise.streams.runtime.errors import ConsumerFailed
from slotwise.topics.records import Fact, SupersessionEvent
from tests.e2e.harness import Pipeline

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.slow]

TRUTH = {
    "work": ("employer", 200.0),
    "home": ("home_city", 500.0),
    "event": ("current_location", 20.0),
}
CHAINS = {"work": 300, "home": 300, "event": 100}
WINDOW_DAYS = 730.0


def _chains(now: datetime, seed: int) -> tuple[list[Fact], list[SupersessionEvent]]:
    rng = random.Random(seed)
    facts: list[Fact] = []
    events: list[SupersessionEvent] = []
    for category, (attribute, half_life) in TRUTH.items():
        rate = math.log(2) / half_life
        for chain in range(CHAINS[category]):
            subject = f"cal-{category}-{chain:04d}"
            start = rng.uniform(0, WINDOW_DAYS)
            links: list[Fact] = []
            while True:
                lived = rng.expovariate(rate)
                ends = start + lived < WINDOW_DAYS
                begin = now - timedelta(days=WINDOW_DAYS - start)
                links.append(
                    Fact(
                        schema="fact/1",
                        fact_id=f"{subject}-{len(links)}",
                        subject_id=subject,
                        attribute=attribute,
                        value=f"v{len(links)}",
                        text=f"{attribute} v{len(links)}",
                        category=category,
                        status="superseded" if ends else "current",
                        valid_from=begin,
                        valid_to=begin + timedelta(days=lived) if ends else None,
                        observed_at=begin,
                        recorded_at=begin,
                        source="chat",
                        confidence=0.9,
                        importance=0.5,
                        candidate_id=f"c-{subject}-{len(links)}",
                    )
                )
                if not ends:
                    break
                start += lived
            for old, new in itertools.pairwise(links):
                events.append(
                    SupersessionEvent(
                        schema="supersession/1",
                        event_id=str(uuid.uuid4()),
                        subject_id=subject,
                        attribute=attribute,
                        old_fact_id=old.fact_id,
                        new_fact_id=new.fact_id,
                        old_value=old.value,
                        new_value=new.value,
                        old_text=old.text,
                        new_text=new.text,
                        decided_by="exact",
                        reason="synthetic",
                        valid_from=new.valid_from,
                        recorded_at=new.valid_from,
                    )
                )
            facts += links
    return facts, events


def _store(pipeline: Pipeline, facts: list[Fact]) -> None:
    async def write() -> None:
        store = RedisStore.from_url(pipeline.settings.redis_url, prefix=pipeline.redis_prefix)
        try:
            by_subject: dict[str, list[Fact]] = {}
            for fact in facts:
                by_subject.setdefault(fact.subject_id, []).append(fact)
            for subject, own in by_subject.items():
                outcome = await store.apply(
                    subject,
                    "seed",
                    expected_version=0,
                    facts=own,
                    outputs=b"{}",
                    now=own[0].recorded_at,
                )
                assert not outcome.stale
        finally:
            await store.close()

    asyncio.run(write())


def _closed(pipeline: Pipeline) -> int:
    return sum(part.closed for part in changelog_lifetimes(pipeline.deployment).values())


def _until_counted(pipeline: Pipeline, app: ChildProcess, expected: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    seen: int | str = 0
    while True:
        try:
            seen = _closed(pipeline)
        except CalibrationUnavailable as exc:
            # The app has just created its changelog: its partitions can still lack a
            # leader for a moment. Anything lasting shows in the message at the deadline.
            seen = f"none readable ({exc})"
        if isinstance(seen, int) and seen >= expected:
            return
        app.check_alive()
        if time.monotonic() > deadline:
            # The offsets say which side stopped: the group's commits short of the end,
            # nothing was processed; at the end with the count short, the table's changelog
            # writes did not go out. On SIGUSR1 mode's worker appends every thread's and
            # task's stack to the app's log (after the tail quoted here).
            tail = app.log_tail()
            os.kill(app.pid, signal.SIGUSR1)
            raise TimeoutError(
                f"the app counted {seen} of {expected}\n{_positions(pipeline)}\n"
                f"stacks requested into {app.log_path}; its log until then:\n{tail}"
            )
        time.sleep(1.0)


def _positions(pipeline: Pipeline) -> str:
    """Per partition of the source topic, the app's committed offset and the end offset;
    per partition of its changelog, the end offset."""
    group = app_id(pipeline.deployment)
    source = pipeline.catalogue.supersessions
    partitions = pipeline.catalogue.partitions
    # It joins nothing (no subscribe) and commits nothing: it only reads end offsets.
    consumer = Consumer(
        pipeline.settings.librdkafka({"group.id": group, "enable.auto.commit": False})
    )
    try:
        committed = committed_offsets(pipeline.settings, group, source, partitions, timeout=10)
        wanted = [TopicPartition(source, p) for p in range(partitions)]
        ends = {tp.partition: consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in wanted}
        changelog = changelog_topic(pipeline.deployment)
        logged = {
            p: consumer.get_watermark_offsets(TopicPartition(changelog, p), timeout=10)[1]
            for p in range(partitions)
        }
    except (KafkaException, ConsumerFailed) as exc:  # the latter: offsets still unreadable
        return f"offsets of group {group}: {exc!r}"
    finally:
        consumer.close()
    return (
        f"{source} committed/end by partition: "
        + ", ".join(f"{p}: {committed[p]}/{ends[p]}" for p in sorted(ends))
        + f"; {changelog} end by partition: {logged}"
    )


@pytest.mark.timeout(1200)
def test_calibration_recovers_known_half_lives_through_a_crash(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    facts, events = _chains(now, seed=20)
    _store(pipeline, facts)
    half = len(events) // 2
    pipeline.publish(pipeline.catalogue.supersessions, events[:half])
    env = {
        **pipeline.env,
        "SLOTWISE_DATA_DIR": str(tmp_path / "data"),
        "SLOTWISE_FORGET_CALIBRATE_METRICS_PORT": str(free_port()),
        "SLOTWISE_FORGET_CALIBRATE_REFRESH_S": "3600",
    }
    argv = [sys.executable, "-m", "slotwise.streams.passes.calibration_app"]
    app: ChildProcess | None = None
    try:
        app = ChildProcess(argv, tmp_path / "calibrate-1.log", env=env).start()
        _until_counted(pipeline, app, half, timeout=300)
        app.kill()
        pipeline.publish(pipeline.catalogue.supersessions, events[half:])
        app = ChildProcess(argv, tmp_path / "calibrate-2.log", env=env).start()
        _until_counted(pipeline, app, len(events), timeout=300)
        time.sleep(3)  # nothing more arrives: each event counted once
        assert _closed(pipeline) == len(events)
        app.terminate(30)

        schema = AttributeSchema.load()
        fits = fits_of(
            changelog_lifetimes(pipeline.deployment),
            store_lifetimes(pipeline.deployment, schema, as_of=datetime.now(UTC), closed=False),
            current_half_lives(schema),
            confidence=0.95,
        )
        by_category = {f.category: f for f in fits}
        for category, (_, truth) in TRUTH.items():
            result = by_category[category]
            assert result.contains(truth), (category, truth, result)
            naive = result.lifetimes.naive_mean_days
            assert naive is not None and naive * math.log(2) < result.half_life_days  # type: ignore[operator]

        shown = _cli(env, "calibrate", "--json")
        lines = {json.loads(line)["category"]: json.loads(line) for line in shown.splitlines()}
        assert lines["work"]["closed"] == by_category["work"].lifetimes.closed
        proposal = tmp_path / "attributes.v2.json"
        _cli(env, "calibrate", "--write", "--out", str(proposal))
        written = json.loads(proposal.read_text())
        assert written["version"] == "2"
        assert written["attributes"]["name"]["half_life_days"] is None
        assert written["attributes"]["current_location"]["half_life_days"] == round(
            by_category["event"].half_life_days or 0
        )
        assert AttributeSchema.load().attributes["current_location"].half_life_days == 30
    finally:
        # A failed wait leaves the app running; it would outlive the test and its topics.
        if app is not None and app.alive():
            app.kill()
        _drop_app_topics(pipeline)


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "slotwise.streams", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _drop_app_topics(pipeline: Pipeline) -> None:
    admin = AdminClient(pipeline.settings.librdkafka())
    mine = [
        t for t in admin.list_topics(timeout=10).topics if t.startswith(app_id(pipeline.deployment))
    ]
    if mine:
        for future in admin.delete_topics(mine).values():
            future.result()
