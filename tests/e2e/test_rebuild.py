"""``slotwise rebuild`` from the compacted facts topic equals the live state.

A worker applies a generated run (schematized and free-text facts, supersessions,
an erased attribute: tombstones); then ``rebuild --all`` goes into an empty Redis
prefix and fresh Milvus collections, killed -9 once mid-way and resumed. The
rebuilt store equals the live one fact by fact (compared here directly, and by
``--verify`` against each); ``--all`` refuses a store that holds facts, and
``--subject S`` rebuilds one subject in place. ``SLOTWISE_REBUILD_CANDIDATES`` sizes the run (20,000
for the issue's figure; small in CI).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis

from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.redis.cold import subjects
from slotwise.streams.config import Settings
from slotwise.streams.rebuild.from_log import FactsLog, Rebuild, RebuildRefused, open_rebuild_stores
from slotwise.streams.rebuild.verify import verify
from slotwise.topics.records import CandidateFact, Command
from tests.e2e.conftest import PipelineFactory
from tests.e2e.harness import Pipeline
from tests.e2e.lifecycle import cli, popen

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

CANDIDATES = int(os.environ.get("SLOTWISE_REBUILD_CANDIDATES", "1000"))


def inspect(pipeline: Pipeline, subject_id: str | None = None) -> tuple[dict[str, object], int]:
    """Per subject: every fact, the slot index, the Milvus rows of current facts; and how
    many differences ``rebuild --verify`` finds (in process: a CLI start costs seconds)."""

    async def read() -> tuple[dict[str, object], int]:
        async with AsyncExitStack() as stack:
            stores = await open_rebuild_stores(pipeline.deployment, stack)
            found: dict[str, object] = {}
            async for subject in subjects(stores.store):
                facts = await stores.store.facts(subject, include_history=True)
                rows = await stores.tiers.rows_of(subject)
                current = {f.fact_id for f in facts if f.status == "current"}
                found[subject] = (
                    facts,
                    await stores.redis.current_index(subject),
                    {f: t for f, t in rows["hot"].items() if f in current},
                )
            log = FactsLog(pipeline.deployment)
            try:
                differences = await verify(stores, log, subject_id=subject_id)
                with pytest.raises(RebuildRefused):  # --all never writes over a store
                    await Rebuild(stores, log, subject_id=None).run()
            finally:
                log.close()
            return found, len(differences)

    return asyncio.run(read())


def test_rebuild_all_into_an_empty_store_equals_the_live_one(
    pipeline_factory: PipelineFactory, stack: Settings, tmp_path: Path
) -> None:
    live = pipeline_factory()
    config = WorkloadConfig(
        subjects=30, count=CANDIDATES, seed=23, contradiction_rate=0.2,
        subject_prefix=f"rb{uuid.uuid4().hex[:6]}",
    )  # fmt: skip
    candidates: list[CandidateFact] = [
        w.candidate() for w in generate(config, AttributeSchema.load())
    ]
    doomed = next(c for c in candidates if c.attribute is not None)
    erase = Command(
        command_id=str(uuid.uuid4()),
        subject_id=doomed.subject_id,
        command="erase",
        issued_at=datetime.now(UTC),
        reason="e2e",
        attribute=doomed.attribute,
    )
    topic = live.catalogue.candidates
    live.worker().wait_healthy()
    ends = live.publish(topic, [*candidates, erase])
    live.wait_committed(topic, ends, timeout=900)
    live.stop_all()  # verify compares an idle store

    rebuilt = Pipeline(stack, live.catalogue, tmp_path)  # the same topics, empty stores
    try:
        progress = redis.Redis.from_url(stack.redis_url)
        offsets = f"{rebuilt.redis_prefix}:{{rebuild:all}}:offsets"
        killed_log = tmp_path / "rebuild-killed.log"
        victim = popen(rebuilt, killed_log, "rebuild", "--all", "--batch", "10")
        deadline = time.monotonic() + 300
        while set(progress.hkeys(offsets)) <= {b"begun"}:  # until a batch is done
            assert victim.poll() is None, killed_log.read_text()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        victim.kill()
        victim.wait(10)
        progress.close()

        started = time.monotonic()
        done = json.loads(cli(rebuilt, "rebuild", "--all", "--json", timeout=900).stdout)
        seconds = time.monotonic() - started
        assert done["resumed"] is True
        assert done["tombstones"] >= 1
        print(f"rebuild resumed: {done} in {seconds:.1f} s")

        check = cli(rebuilt, "rebuild", "--all", "--verify", "--json", check=False)
        assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
        assert json.loads(check.stdout)["count"] == 0
        rebuilt_state, rebuilt_differences = inspect(rebuilt)
        live_state, live_differences = inspect(live)
        assert (rebuilt_differences, live_differences) == (0, 0)
        assert rebuilt_state == live_state
        assert len(live_state) == 30

        # One subject is rebuilt in place (the store holds others).
        cli(live, "rebuild", "--subject", doomed.subject_id)
        assert inspect(live, doomed.subject_id) == (live_state, 0)
    finally:
        rebuilt.drop()
