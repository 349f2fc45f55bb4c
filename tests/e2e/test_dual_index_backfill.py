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
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from pymilvus import MilvusClient

from slotwise.models.embedders import FolderEmbedder, MiniLMEmbedder, minilm_model_dir
from slotwise.processors.model import VectorRow
from slotwise.sinks.redis_migration import Migration, MigrationStore
from slotwise.sinks.redis_store import RedisStore
from slotwise.streams.settings import Settings
from slotwise.streams.testing import drop_deployment
from slotwise.streams.vector_space import open_fact_index

pytestmark = [pytest.mark.redis, pytest.mark.milvus]

FACTS = int(os.environ.get("SLOTWISE_TEST_BACKFILL_FACTS", "240"))
BATCH = 16
RATE = 60  # rows a second: a few seconds in all, so the kill lands mid-way
PLACES = "Lisbon Porto Berlin Paris Madrid Rome Oslo Vienna Prague Dublin Sofia Riga".split()
HOBBIES = "chess piano climbing tennis baking running painting rowing".split()


@pytest.fixture
def deployment(stack: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    namespace = f"t{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("SLOTWISE_NAMESPACE", namespace)
    monkeypatch.setenv("SLOTWISE_EMBEDDER", "minilm")
    monkeypatch.setenv("SLOTWISE_MIGRATION_POLL_S", "0.5")
    settings = Settings()
    yield settings
    drop_deployment(settings)


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "slotwise.streams", "migrate", *args]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_command(*args), capture_output=True, text=True, timeout=300, check=False)


async def _recorded(settings: Settings) -> Migration:
    store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
    try:
        found = await MigrationStore(store, settings.redis_prefix).get()
        assert found is not None
        return found
    finally:
        await store.close()


def _rows(settings: Settings, collection: str) -> dict[str, dict[str, object]]:
    client = MilvusClient(uri=settings.milvus_uri)
    try:
        client.load_collection(collection)
        found = client.query(
            collection, filter="", output_fields=["text", "embedding_model", "vector"], limit=16384
        )
    finally:
        client.close()
    return {str(r["fact_id"]): dict(r) for r in found}


def test_a_backfill_killed_mid_way_and_rerun_ends_as_an_uninterrupted_one(
    deployment: Settings, tmp_path: Path
) -> None:
    folder = tmp_path / "all-MiniLM-L6-v2-renamed"
    folder.symlink_to(minilm_model_dir(), target_is_directory=True)
    new_model = f"st:{folder}"

    async def run() -> tuple[subprocess.CompletedProcess[str], int]:
        store = RedisStore.from_url(deployment.redis_url, prefix=deployment.redis_prefix)
        index = await open_fact_index(deployment, store, MiniLMEmbedder())
        try:
            await index.setup()
            index.add(
                VectorRow(
                    f"f{n:04d}",
                    f"user-{n % 6}",
                    f"User plays {HOBBIES[n % len(HOBBIES)]} in {PLACES[n % len(PLACES)]} "
                    f"on day {n}.",
                    "misc",
                )
                for n in range(FACTS)
            )
            await index.flush()
            started = await asyncio.to_thread(_run, "start", "--to", new_model)
            assert started.returncode == 0, started.stdout + started.stderr
            first = subprocess.Popen(
                _command("backfill", "--batch", str(BATCH), "--rate", str(RATE)),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            deadline = time.monotonic() + 120
            while (await _recorded(deployment)).backfilled < FACTS // 3:
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
            killed_at = (await _recorded(deployment)).backfilled
            assert not (await _recorded(deployment)).backfill_done
            rerun = await asyncio.to_thread(_run, "backfill", "--batch", str(BATCH))
            return rerun, killed_at
        finally:
            await index.close()
            await store.close()

    rerun, killed_at = asyncio.run(run())
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    this_run = re.search(r"(\d+) rows\s+this\s+run", rerun.stdout)
    assert this_run and int(this_run.group(1)) <= FACTS + 1 - killed_at + BATCH, rerun.stdout

    migration = asyncio.run(_recorded(deployment))
    assert migration.backfill_done
    old, new = (
        _rows(deployment, migration.from_collection),
        _rows(deployment, migration.to_collection),
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
