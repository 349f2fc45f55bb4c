"""``slotwise migrate adapter fit | validate | enable | disable`` and ``migrate status``.

Against the real Redis and Milvus Lite, in a namespace of the test's own: an
"old model" collection is written, a "new model" (the old one's vectors turned
into a 48-d space) gets an adapter fitted on the stored facts, and a process
with the new embedder then opens the index through it — and is refused
without it. The embedders are the deterministic ones of the Milvus tests; the
models under test here are the commands, the stores and the wiring.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Iterator

import pytest
from pymilvus import MilvusClient
from typer.testing import CliRunner, Result

from slotwise.processors.model import VectorRow
from slotwise.processors.ports import Embedder
from slotwise.sinks.exceptions import EmbeddingModelMismatch
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.cli import app
from slotwise.streams.cli import migrate as cli_migrate
from slotwise.streams.config import Settings
from slotwise.streams.dev.testing import drop_deployment
from slotwise.streams.read.vector_space import open_fact_index
from tests.sinks.milvus.test_index import WORDS, HashEmbedder, RotatedEmbedder

pytestmark = [pytest.mark.redis, pytest.mark.milvus]

FACTS = 300


@pytest.fixture
def deployment(stack: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """A namespace holding FACTS facts embedded by the old model; removed after."""
    namespace = f"t{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("SLOTWISE_NAMESPACE", namespace)
    settings = Settings()
    # The commands build this process's embedder from the setting: the new model.
    monkeypatch.setattr(cli_migrate, "embedder_named", lambda _spec: RotatedEmbedder())

    async def populate() -> None:
        index = MilvusIndex(
            settings.milvus_uri,
            HashEmbedder(),
            alias=settings.milvus_alias,
            prefix=settings.milvus_collection_prefix,
        )
        await index.setup()
        words = [WORDS[i % len(WORDS)] for i in range(FACTS * 3)]
        index.add(
            VectorRow(
                fact_id=f"f{n}",
                subject_id=f"user-{n % 7}",
                text=" ".join(words[3 * n : 3 * n + 3][:: 1 + n % 2]) + f" {n % 5}",
                category="misc",
            )
            for n in range(FACTS)
        )
        await index.flush()
        await index.close()

    asyncio.run(populate())
    yield settings
    drop_deployment(settings)


def migrate(*args: str) -> Result:
    return CliRunner().invoke(app, ["migrate", *args])


def opens(settings: Settings, embedder: Embedder) -> str | None:
    """Open the deployment's index as a worker does; the collection it searches."""

    async def run() -> str | None:
        store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
        index = await open_fact_index(settings, store, embedder)
        try:
            await index.setup()
            assert await index.nearest("user-1", "lisbon porto", k=3, floor=-1.0)
            return index.collection
        finally:
            await index.close()
            await store.close()

    return asyncio.run(run())


def test_fit_validate_enable_bridges_a_new_embedder_to_the_old_collection(
    deployment: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(EmbeddingModelMismatch, match=r"test-hash-v1.*test-hash-v2"):
        opens(deployment, RotatedEmbedder())

    fitted = migrate("adapter", "fit", "--sample", str(FACTS))
    assert fitted.exit_code == 0, fitted.output
    found = re.search(r"test-hash-v2>test-hash-v1:procrustes:([0-9a-f]{12})", fitted.output)
    assert found, fitted.output
    version = found.group(1)

    refused = migrate("adapter", "enable", version)
    assert refused.exit_code == 1 and "no passed validation" in refused.output
    with monkeypatch.context() as other:
        other.setattr(cli_migrate, "embedder_named", lambda _spec: RotatedEmbedder("test-hash-v3"))
        wrong = migrate("adapter", "validate", version)
    assert wrong.exit_code == 1 and "gives test-hash-v3" in wrong.output

    checked = migrate("adapter", "validate", version, "--min-recall", "0.95")
    assert checked.exit_code == 0, checked.output
    scored = re.search(r"Recall@10 ([0-9.]+)", checked.output)
    assert scored and float(scored.group(1)) >= 0.95, checked.output

    enabled = migrate("adapter", "enable", version)
    assert enabled.exit_code == 0, enabled.output
    collection = opens(deployment, RotatedEmbedder())
    assert collection is not None and "test_hash_v1" in collection
    # A process still on the old model searches its own space, adapter or not.
    assert opens(deployment, HashEmbedder()) == collection
    shown = migrate("status")
    assert f"{FACTS:>9,} rows  test-hash-v1" in shown.output and version in shown.output

    disabled = migrate("adapter", "disable")
    assert disabled.exit_code == 0 and version in disabled.output
    with pytest.raises(EmbeddingModelMismatch):
        opens(deployment, RotatedEmbedder())


def test_rows_of_another_model_in_the_collection_block_fit_and_enable(
    deployment: Settings,
) -> None:
    fitted = migrate("adapter", "fit", "--sample", str(FACTS))
    assert fitted.exit_code == 0, fitted.output
    version = fitted.output.split(":procrustes:")[1][:12]
    # The retrofit trap: a few rows re-embedded by some other model, stamp and all.
    client = MilvusClient(uri=deployment.milvus_uri)
    name = client.describe_alias(deployment.milvus_alias)["collection_name"]
    stray = HashEmbedder("test-hash-v0").embed(["lisbon tea"])[0]
    client.upsert(
        name,
        [
            {
                "fact_id": "stray",
                "subject_id": "user-1",
                "embedding_model": "test-hash-v0",
                "category": "misc",
                "text": "lisbon tea",
                "vector": stray,
            }
        ],
    )
    client.flush(name)
    client.close()

    for refused in (
        migrate("adapter", "fit", "--sample", str(FACTS)),
        migrate("adapter", "enable", version, "--force"),
    ):
        assert refused.exit_code == 1
        assert "1 rows of test-hash-v0" in refused.output, refused.output
    assert "test-hash-v0  (foreign)" in migrate("status").output
