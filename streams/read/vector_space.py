"""The fact index a process searches, in the vector space its collection was built in.

A process embeds with its configured embedder (``SLOTWISE_EMBEDDER``). When
that is not the model the alias's collection was embedded with, the index
refuses to start (``sinks/milvus/index.py``) — unless the deployment has
enabled a drift adapter from this embedder (``slotwise migrate adapter
enable``): then queries and written rows are mapped into the collection's
space. An enabled adapter from another model is not this process's concern:
a worker still on the old model searches its own space directly.

The enabled adapter is read once, when the index opens: enabling or disabling
one takes effect as the workers restart (a rolling restart), which is also
when they change embedder. A dual-index migration, by contrast, is noticed
while running (``streams/migration/watch.py``).
"""

from __future__ import annotations

import logging

from slotwise.processors.ports import Embedder
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.redis.adapters import AdapterStore
from slotwise.sinks.redis.migration import MigrationStore
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import Settings
from slotwise.streams.migration.watch import MigrationWatch

__all__ = ["open_fact_index"]

log = logging.getLogger(__name__)


async def open_fact_index(settings: Settings, store: RedisStore, embedder: Embedder) -> MilvusIndex:
    """The deployment's index for ``embedder``, through the enabled adapter if it starts there."""
    adapter = await AdapterStore(store, settings.redis_prefix).enabled()
    migrations = MigrationStore(store, settings.redis_prefix)
    migration = await migrations.get()
    if adapter is not None and adapter.source_model != embedder.model_name:
        adapter = None
    if (
        adapter is not None
        and migration is not None
        and migration.step in {"switched", "finished"}
        and migration.to_model == embedder.model_name
    ):
        # The alias now holds this embedder's own vectors: the bridge into the old
        # collection is kept enabled for a rollback, not used.
        adapter = None
    if adapter is not None:
        log.info("searching %s space through adapter %s", adapter.target_model, adapter.stamp)
    return MilvusIndex(
        settings.milvus_uri,
        embedder,
        token=settings.milvus_token.get_secret_value() if settings.milvus_token else None,
        alias=settings.milvus_alias,
        prefix=settings.milvus_collection_prefix,
        flush_every=settings.milvus_flush_every,
        adapter=adapter,
        dual_write=MigrationWatch(migrations, embedder, poll_s=settings.migration_poll_s),
    )
