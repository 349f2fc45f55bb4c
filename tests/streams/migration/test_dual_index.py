"""``slotwise migrate start | backfill | validate | switch | rollback | finish`` in process.

The deployment of ``test_cli_migrate`` (FACTS facts of the hash "old model");
the new model is the hash embedder turned into a 48-d space (same neighbours:
validation passes) or a noise embedder (unrelated neighbours: it fails). A
writer's index built like a worker's, with the migration watched, shows dual
writes starting without a restart; a reader thread searching through the
alias while it is switched and rolled back sees one model's rows at a time.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest
from pymilvus import MilvusClient

from slotwise.processors.model import VectorRow
from slotwise.processors.ports import Embedder
from slotwise.sinks.milvus.erasure import MilvusErasure
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.redis.migration import MigrationStore
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.cli import migrate_io as cli_migrate_io
from slotwise.streams.cli import migrate_steps as cli_dual_index
from slotwise.streams.config import Settings
from slotwise.streams.migration.watch import MigrationWatch
from tests.sinks.milvus.test_index import HashEmbedder, RotatedEmbedder, noting_client
from tests.streams.cli.test_migrate import FACTS, deployment, migrate, opens

pytestmark = [pytest.mark.redis, pytest.mark.milvus]

__all__ = ["deployment"]  # the fixture, used by name

POLL_S = 0.2


class NoiseEmbedder:
    """A "model" whose vectors have nothing to do with the text's words."""

    model_name = "test-noise-v1"
    dimension = 32

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            row = np.random.default_rng(seed).normal(size=self.dimension)
            rows.append((row / np.linalg.norm(row)).tolist())
        return rows


def resolve(spec: str) -> Embedder:
    return {"hash": HashEmbedder, "rotated": RotatedEmbedder, "noise": NoiseEmbedder}[spec]()


@pytest.fixture
def settings(deployment: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setattr(cli_dual_index, "embedder_named", resolve)
    monkeypatch.setenv("SLOTWISE_MIGRATION_POLL_S", str(POLL_S))
    return Settings()


def rows(settings: Settings, collection: str) -> dict[str, dict[str, object]]:
    client = MilvusClient(uri=settings.milvus_uri)
    try:
        client.load_collection(collection)
        found = client.query(
            collection, filter="", output_fields=["text", "embedding_model", "vector"], limit=16384
        )
    finally:
        client.close()
    return {str(r["fact_id"]): dict(r) for r in found}


def migration(settings: Settings) -> dict[str, str]:
    async def run() -> dict[str, str]:
        store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
        try:
            found = await MigrationStore(store, settings.redis_prefix).get()
            assert found is not None
            return {"old": found.from_collection, "new": found.to_collection, "step": found.step}
        finally:
            await store.close()

    return asyncio.run(run())


class AliasReader(threading.Thread):
    """Searches through the alias until stopped, noting any empty or mixed result."""

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self._settings = settings
        self._stopped = threading.Event()
        self.seen: list[set[str]] = []
        self.problems: list[str] = []

    def stop(self) -> None:
        self._stopped.set()
        self.join(30)

    def run(self) -> None:
        alias = self._settings.milvus_alias
        client = MilvusClient(uri=self._settings.milvus_uri)
        while not self._stopped.is_set():
            # Each collection is searched in its own space: the query follows the alias.
            behind = str(client.describe_alias(alias)["collection_name"])
            embedder = RotatedEmbedder() if "test_hash_v2" in behind else HashEmbedder()
            try:
                hits = client.search(
                    alias,
                    data=embedder.embed(["lisbon porto"]),
                    limit=10,
                    filter='subject_id == "user-1"',
                    output_fields=["embedding_model"],
                )[0]
            except Exception as exc:
                # Swapped between describe and search: the query has the other dimension.
                if "dim" not in str(exc).lower():
                    self.problems.append(str(exc))
                continue
            stamps = {str(h["entity"]["embedding_model"]) for h in hits}
            if not hits or len(stamps) != 1:
                self.problems.append(f"{len(hits)} hits stamped {stamps}")
            self.seen.append(stamps)
        client.close()


def test_start_makes_a_running_writer_dual_write_and_erasure_reach_both(
    settings: Settings,
) -> None:
    async def run() -> None:
        store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
        index = _watched_index(settings, store, HashEmbedder())
        try:
            await index.setup()
            index.add([VectorRow("before", "user-1", "lisbon tea", "misc")])
            await index.flush()
            # The CLI runs its own event loop: in a thread, as it would in its own process.
            started = await asyncio.to_thread(migrate, "start", "--to", "rotated", "--from", "hash")
            assert started.exit_code == 0, started.output
            again = await asyncio.to_thread(migrate, "start", "--to", "rotated", "--from", "hash")
            assert again.exit_code == 0 and again.output == started.output
            other = await asyncio.to_thread(migrate, "start", "--to", "noise", "--from", "hash")
            assert other.exit_code == 1 and "under way" in other.output
            await asyncio.sleep(POLL_S * 2)  # the running index re-reads the record
            index.add(
                [
                    VectorRow("during", "user-1", "porto chess", "misc"),
                    VectorRow("f1", "user-1", "berlin piano changed", "misc"),
                ]
            )
            await index.flush()
            names = await asyncio.to_thread(migration, settings)
            new = rows(settings, names["new"])
            assert set(new) == {"during", "f1"}  # "before" is the backfill's
            assert {str(r["embedding_model"]) for r in new.values()} == {"test-hash-v2"}
            assert new["f1"]["text"] == "berlin piano changed"
            expected = RotatedEmbedder().embed(["porto chess"])[0]
            assert np.allclose(new["during"]["vector"], expected, atol=1e-5)
            assert rows(settings, names["old"])["during"]["embedding_model"] == "test-hash-v1"

            # The other collection holds the hot tier only: archived out, restored in.
            assert await index.archive("user-1", ["during"]) == 1
            assert "during" not in rows(settings, names["new"])
            assert await index.restore("user-1", ["during"]) == 1
            assert rows(settings, names["new"])["during"]["text"] == "porto chess"

            # The erasure path's Milvus side goes through every collection of the
            # prefix: the migration's new one too, found by name at the erase.
            erasure = MilvusErasure(
                settings.milvus_uri, HashEmbedder(), prefix=settings.milvus_collection_prefix
            )
            try:
                before = await erasure.count("user-1", None)
                assert before[names["new"]] == len(new) and before[names["old"]] > len(new)
                await erasure.delete("user-1", None)
                assert sum((await erasure.count("user-1", None)).values()) == 0
            finally:
                await erasure.close()
            assert not rows(settings, names["new"])
        finally:
            await index.close()
            await store.close()

    asyncio.run(run())
    shown = migrate("status")
    assert shown.exit_code == 0, shown.output
    assert "test-hash-v1 -> test-hash-v2, dual-writing" in shown.output
    assert "0 rows" in shown.output and "backfill: 0 rows written" in shown.output


def test_backfill_validate_then_switch_and_rollback_are_atomic_for_readers(
    settings: Settings,
) -> None:
    assert migrate("start", "--to", "rotated", "--from", "hash").exit_code == 0
    refused = migrate("switch")
    assert refused.exit_code == 1 and "backfill has not finished" in refused.output
    filled = migrate("backfill", "--batch", "64")
    assert filled.exit_code == 0, filled.output
    names = migration(settings)
    old, new = rows(settings, names["old"]), rows(settings, names["new"])
    assert set(new) == set(old) and len(new) == FACTS
    assert all(new[f]["text"] == old[f]["text"] for f in old)
    checked = migrate("validate", "--sample", "100", "--min-recall", "0.95")
    assert checked.exit_code == 0, checked.output

    reader = AliasReader(settings)
    reader.start()
    try:
        for step in ("switch", "rollback", "switch", "rollback", "switch"):
            done = migrate(step)
            assert done.exit_code == 0, done.output
            time.sleep(0.3)
    finally:
        reader.stop()
    problems, seen = reader.problems, reader.seen
    assert not problems, problems[:5]
    assert {"test-hash-v1"} in seen and {"test-hash-v2"} in seen
    assert migration(settings)["step"] == "switched"

    kept = migrate("finish", "--grace", "7")
    assert kept.exit_code == 0 and "kept until" in kept.output
    assert migration(settings)["step"] == "finished"
    client = MilvusClient(uri=settings.milvus_uri)
    assert client.has_collection(names["old"])
    dropped = migrate("finish", "--now")
    assert dropped.exit_code == 0 and f"dropped {names['old']}" in dropped.output
    assert not client.has_collection(names["old"])
    client.close()
    assert "dropped  " + names["old"] in migrate("status").output


def test_backfill_and_validate_read_both_collections_at_strong_consistency(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A backfill re-reads each page from the old collection to catch rows rewritten while
    # it embedded them; at a server's default level it could miss the latest rewrite.
    asked: list[tuple[str, object]] = []
    monkeypatch.setattr(cli_migrate_io, "MilvusClient", noting_client(asked))
    assert migrate("start", "--to", "rotated", "--from", "hash").exit_code == 0
    filled = migrate("backfill", "--batch", "64")
    assert filled.exit_code == 0, filled.output
    checked = migrate("validate", "--sample", "100", "--min-recall", "0.95")
    assert checked.exit_code == 0, checked.output
    assert {"search", "query", "query_iterator"} <= {name for name, _ in asked}
    assert {level for _, level in asked} == {"Strong"}


def _watched_index(settings: Settings, store: RedisStore, embedder: Embedder) -> MilvusIndex:
    return MilvusIndex(
        settings.milvus_uri,
        embedder,
        alias=settings.milvus_alias,
        prefix=settings.milvus_collection_prefix,
        dual_write=MigrationWatch(
            MigrationStore(store, settings.redis_prefix), embedder, poll_s=POLL_S, resolve=resolve
        ),
    )


def test_after_the_switch_a_new_model_worker_opens_the_new_collection_and_writes_back(
    settings: Settings,
) -> None:
    fitted = migrate("adapter", "fit", "--sample", str(FACTS))
    version = re.search(r":procrustes:([0-9a-f]{12})", fitted.output)
    assert version, fitted.output
    assert migrate("adapter", "validate", version.group(1)).exit_code == 0
    assert migrate("adapter", "enable", version.group(1)).exit_code == 0
    assert migrate("start", "--to", "rotated", "--from", "hash").exit_code == 0
    assert migrate("backfill").exit_code == 0
    assert migrate("validate", "--sample", "100").exit_code == 0
    names = migration(settings)
    # Before the switch the new-model worker searches the old collection through the adapter.
    assert opens(settings, RotatedEmbedder()) == names["old"]
    assert migrate("switch").exit_code == 0
    assert opens(settings, RotatedEmbedder()) == names["new"]  # its own space, no adapter
    assert migrate("rollback").exit_code == 0
    assert opens(settings, RotatedEmbedder()) == names["old"]
    assert migrate("switch").exit_code == 0

    async def write() -> None:
        store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
        index = _watched_index(settings, store, RotatedEmbedder())
        try:
            await index.setup()
            assert index.collection == names["new"]
            index.add([VectorRow("after", "user-3", "vegan tea", "misc")])
            await index.flush()
        finally:
            await index.close()
            await store.close()

    asyncio.run(write())
    # Written back into the old collection in the old model's space: a rollback loses nothing.
    back = rows(settings, names["old"])["after"]
    assert back["embedding_model"] == "test-hash-v1"
    assert np.allclose(back["vector"], HashEmbedder().embed(["vegan tea"])[0], atol=1e-5)
    assert rows(settings, names["new"])["after"]["embedding_model"] == "test-hash-v2"


def test_validate_exits_non_zero_below_the_threshold(settings: Settings) -> None:
    assert migrate("start", "--to", "noise", "--from", "hash").exit_code == 0
    assert migrate("backfill").exit_code == 0
    low = migrate("validate", "--sample", "100", "--min-recall", "0.9")
    assert low.exit_code == 1, low.output
    scored = re.search(r"on (\d+) shadow queries: Recall@10 ([0-9.]+)", low.output)
    assert scored and int(scored.group(1)) > 50 and float(scored.group(2)) < 0.9, low.output
    refused = migrate("switch")
    assert refused.exit_code == 1 and "no passed validation" in refused.output
