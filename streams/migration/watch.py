"""How a running process learns that a migration dual-writes, without a restart.

The index asks before each write (``sinks/milvus/shadow.py``); the answer is
the migration record in Redis (``sinks/redis/migration.py``), read at most
once every ``poll_s`` seconds, so a worker starts (and stops) dual-writing
within ``poll_s`` of ``migrate start`` (``finish``) at the cost of one HGETALL
per ``poll_s``. ``migrate backfill`` waits that long after ``start`` before it
reads the old collection, so every row written after its scan began was
dual-written.

The other model's embedder is built from the setting the migration recorded
for it — unless it is this process's own model (a worker already on the new
model, through the adapter), which is reused.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from slotwise.models.embedders import embedder_named
from slotwise.processors.ports import Embedder
from slotwise.sinks.exceptions import EmbeddingModelMismatch
from slotwise.sinks.milvus.shadow import Shadow
from slotwise.sinks.redis.migration import Migration, MigrationStore

__all__ = ["MigrationWatch"]


class MigrationWatch:
    """Implements ``sinks.milvus_shadow.DualWrite`` from the deployment's migration record."""

    def __init__(
        self,
        migrations: MigrationStore,
        own: Embedder,
        *,
        poll_s: float,
        resolve: Callable[[str], Embedder] = embedder_named,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._migrations = migrations
        self._own = own
        self._poll_s = poll_s
        self._resolve = resolve
        self._monotonic = monotonic
        self._read_at: float | None = None
        self._migration: Migration | None = None
        self._embedders: dict[str, Embedder] = {own.model_name: own}

    async def shadow(self, primary: str) -> Shadow | None:
        migration = await self._current()
        if migration is None or not migration.dual_writing:
            return None
        other = migration.other(primary)
        if other is None:
            return None
        collection, model = other
        return Shadow(collection, await self._embedder(migration, model))

    async def _current(self) -> Migration | None:
        now = self._monotonic()
        if self._read_at is None or now - self._read_at >= self._poll_s:
            self._migration = await self._migrations.get()
            self._read_at = now
        return self._migration

    async def _embedder(self, migration: Migration, model: str) -> Embedder:
        if model not in self._embedders:
            # Loaded on the first dual write, once per process, off the event loop:
            # a model folder takes seconds to load.
            embedder = await asyncio.to_thread(self._resolve, migration.spec_of(model))
            if embedder.model_name != model:
                raise EmbeddingModelMismatch(
                    f"the migration records {migration.spec_of(model)!r} for {model}, "
                    f"but it embeds with {embedder.model_name}"
                )
            self._embedders[model] = embedder
        return self._embedders[model]
