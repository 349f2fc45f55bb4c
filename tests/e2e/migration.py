"""What the dual-index migration tests share: the CLI as a process, the record, the rows.

A deployment is a fresh namespace (the ``deployment`` and ``deployment_factory``
fixtures, ``tests/e2e/conftest.py``) on the old model, MiniLM; the new one is
MiniLM's folder under another name (``renamed_minilm``: another stamp, no
second download). Each ``slotwise migrate`` step runs as its own
``python -m slotwise.streams`` process with the deployment's settings in its
environment, or under a :class:`~tests.e2e.killpoint.KillPoint`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pymilvus import MilvusClient

from slotwise.models.embedders import MiniLMEmbedder, minilm_model_dir
from slotwise.processors.model import VectorRow
from slotwise.sinks.redis.migration import Migration, MigrationStore
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import Settings
from slotwise.streams.read.vector_space import open_fact_index
from tests.e2e.killpoint import KillPoint

__all__ = [
    "REPO",
    "DeploymentFactory",
    "collection_rows",
    "deployment_settings",
    "migrate",
    "migrate_command",
    "migrate_env",
    "recorded",
    "renamed_minilm",
    "seed",
    "seed_rows",
]

REPO = Path(__file__).resolve().parents[2]
PLACES = "Lisbon Porto Berlin Paris Madrid Rome Oslo Vienna Prague Dublin Sofia Riga".split()
DeploymentFactory = Callable[[], Settings]
HOBBIES = "chess piano climbing tennis baking running painting rowing".split()


def deployment_settings(namespace: str) -> Settings:
    """A deployment of its own on the old model, noticing a migration within 0.5 s."""
    return Settings(namespace=namespace, embedder="minilm", migration_poll_s=0.5)


def renamed_minilm(folder: Path) -> str:
    """The new model's ``SLOTWISE_EMBEDDER``: MiniLM's weights behind ``folder``."""
    if not folder.exists():
        folder.symlink_to(minilm_model_dir(), target_is_directory=True)
    return f"st:{folder}"


def migrate_command(*args: str, kill: KillPoint | None = None) -> list[str]:
    """``slotwise migrate ARGS``, under ``kill`` if given."""
    head = kill.argv() if kill else [sys.executable, "-m", "slotwise.streams"]
    return [*head, "migrate", *args]


def migrate_env(settings: Settings) -> dict[str, str]:
    return {**os.environ, **settings.to_env()}


def migrate(
    settings: Settings, *args: str, kill: KillPoint | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``slotwise migrate ARGS`` for ``settings``'s deployment to its end (or ``kill``)."""
    return subprocess.run(
        migrate_command(*args, kill=kill),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=REPO,
        env=migrate_env(settings),
    )


def seed_rows(count: int) -> list[VectorRow]:
    """``count`` distinct facts over six subjects, fact ids ``f0000``… in order."""
    return [
        VectorRow(
            f"f{n:04d}",
            f"user-{n % 6}",
            f"User plays {HOBBIES[n % len(HOBBIES)]} in {PLACES[n % len(PLACES)]} on day {n}.",
            "misc",
        )
        for n in range(count)
    ]


async def seed(settings: Settings, rows: list[VectorRow]) -> None:
    """Write ``rows`` through an index opened as a worker opens it (alias, collection)."""
    store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
    index = await open_fact_index(settings, store, MiniLMEmbedder())
    try:
        await index.setup()
        index.add(rows)
        await index.flush()
    finally:
        await index.close()
        await store.close()


async def recorded(settings: Settings) -> Migration:
    """The deployment's migration record (there must be one)."""
    store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
    try:
        found = await MigrationStore(store, settings.redis_prefix).get()
        assert found is not None
        return found
    finally:
        await store.close()


def collection_rows(settings: Settings, collection: str) -> dict[str, dict[str, Any]]:
    """Every row of ``collection`` by fact id: text, embedding_model, vector."""
    client = MilvusClient(uri=settings.milvus_uri)
    try:
        client.load_collection(collection)
        found = client.query(
            collection, filter="", output_fields=["text", "embedding_model", "vector"], limit=16384
        )
    finally:
        client.close()
    return {str(r["fact_id"]): dict(r) for r in found}
