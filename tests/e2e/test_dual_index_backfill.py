"""A backfill killed with SIGKILL and run again, through the real CLI in its own process.

The old model is MiniLM; the new one is MiniLM's folder under another name
(``SLOTWISE_EMBEDDER=st:<folder>``), another stamp and no second download. An
index opened the way a worker opens it (``open_fact_index``, the migration
watched) before ``start`` writes during the backfill: a new fact and a
changed one, which must land in both collections. After the kill and the
rerun, the new collection holds exactly the old one's fact ids, each with its
text and the new model's vector of it, stamped with the new model — what an
uninterrupted run writes — and the rerun resumed rather than started over.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from slotwise.models.embedders import FolderEmbedder, MiniLMEmbedder
from slotwise.processors.model import VectorRow
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import Settings
from slotwise.streams.read.vector_space import open_fact_index
from tests.e2e.migration import (
    REPO,
    collection_rows,
    migrate,
    migrate_command,
    migrate_env,
    recorded,
    renamed_minilm,
    seed_rows,
)

pytestmark = [pytest.mark.redis, pytest.mark.milvus]

FACTS = int(os.environ.get("SLOTWISE_TEST_BACKFILL_FACTS", "240"))
BATCH = 16
RATE = 60  # rows a second: a few seconds in all, so the kill lands mid-way


def test_a_backfill_killed_mid_way_and_rerun_ends_as_an_uninterrupted_one(
    deployment: Settings, tmp_path: Path
) -> None:
    folder = tmp_path / "all-MiniLM-L6-v2-renamed"
    new_model = renamed_minilm(folder)

    async def run() -> tuple[subprocess.CompletedProcess[str], int]:
        store = RedisStore.from_url(deployment.redis_url, prefix=deployment.redis_prefix)
        index = await open_fact_index(deployment, store, MiniLMEmbedder())
        try:
            await index.setup()
            index.add(seed_rows(FACTS))
            await index.flush()
            started = await asyncio.to_thread(migrate, deployment, "start", "--to", new_model)
            assert started.returncode == 0, started.stdout + started.stderr
            first = subprocess.Popen(
                migrate_command("backfill", "--batch", str(BATCH), "--rate", str(RATE)),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                cwd=REPO,
                env=migrate_env(deployment),
            )
            deadline = time.monotonic() + 120
            while (await recorded(deployment)).backfilled < FACTS // 3:
                assert first.poll() is None, first.communicate()[1]
                assert time.monotonic() < deadline
                await asyncio.sleep(0.1)
            # Written while the backfill runs: a changed fact it has passed, a new one.
            index.add(
                [
                    VectorRow("f0001", "user-1", "User moved to Reykjavik in March.", "misc"),
                    VectorRow("g0000", "user-2", "User adopted a greyhound.", "misc"),
                ]
            )
            await index.flush()
            first.send_signal(signal.SIGKILL)
            first.wait(30)
            killed_at = (await recorded(deployment)).backfilled
            assert not (await recorded(deployment)).backfill_done
            rerun = await asyncio.to_thread(migrate, deployment, "backfill", "--batch", str(BATCH))
            return rerun, killed_at
        finally:
            await index.close()
            await store.close()

    rerun, killed_at = asyncio.run(run())
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    this_run = re.search(r"(\d+) rows\s+this\s+run", rerun.stdout)
    assert this_run and int(this_run.group(1)) <= FACTS + 1 - killed_at + BATCH, rerun.stdout

    migration = asyncio.run(recorded(deployment))
    assert migration.backfill_done
    old, new = (
        collection_rows(deployment, migration.from_collection),
        collection_rows(deployment, migration.to_collection),
    )
    assert set(new) == set(old) and len(new) == FACTS + 1
    assert new["f0001"]["text"] == old["f0001"]["text"] == "User moved to Reykjavik in March."
    assert "g0000" in new and "g0000" in old
    assert {str(r["embedding_model"]) for r in new.values()} == {"all-MiniLM-L6-v2-renamed"}
    ids = sorted(old)
    expected = FolderEmbedder(folder).embed([str(old[i]["text"]) for i in ids])
    got = np.asarray([new[i]["vector"] for i in ids], dtype=np.float32)
    assert np.allclose(got, np.asarray(expected, dtype=np.float32), atol=1e-4)
    assert [old[i]["text"] for i in ids] == [new[i]["text"] for i in ids]
