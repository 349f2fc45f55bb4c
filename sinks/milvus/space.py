"""Which vector space an index searches, and the collection that holds it.

The collection is the one the alias (default ``facts_current``) names,
resolved once, at set-up: after an alias swap a worker still running the old
model keeps writing its own model's collection instead of mixing two vector
spaces in the new one. Set-up creates the model's collection and the alias
if the alias is missing, and refuses a collection whose stamp is not the
searched model, naming both (a new-model query against an old-model index
returns near-random neighbours, silently), unless a drift adapter joining
exactly that pair maps the embedder's vectors into the collection's space
(``processors/drift_adapter.py``). Rows written through an adapter are
stamped with the adapter's stamp (``new>old:kind:version``), not the old
model's name: they are not the old model's vectors, and a migration must be
able to tell.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime

from pymilvus import MilvusException

from slotwise.processors.drift_adapter import AdaptedEmbedder, AdapterError, DriftAdapter
from slotwise.processors.ports import Embedder
from slotwise.sinks.exceptions import EmbeddingModelMismatch
from slotwise.sinks.milvus.client import MilvusLink
from slotwise.sinks.milvus.collections import (
    check_model,
    cold_collection_name,
    collection_name,
    create_collection,
)

__all__ = ["IndexSpace"]

_SETUP_ATTEMPTS = 5


class IndexSpace:
    """The searched space of one index: its embedder (through the adapter, if any), the
    stamp its rows carry, and its hot and cold collections.

    ``lock`` is the index's: resolving the collection takes it.
    """

    def __init__(
        self,
        link: MilvusLink,
        lock: asyncio.Lock,
        embedder: Embedder,
        *,
        adapter: DriftAdapter | None,
        alias: str,
        prefix: str,
        clock: Callable[[], datetime],
    ) -> None:
        try:
            self.embedder: Embedder = (
                embedder if adapter is None else AdaptedEmbedder(embedder, adapter)
            )
        except AdapterError as exc:
            raise EmbeddingModelMismatch(str(exc)) from exc
        self._link = link
        self._lock = lock
        self._querying = embedder
        self._adapter = adapter
        self._alias = alias
        self._prefix = prefix
        self._clock = clock
        self.collection: str | None = None

    @property
    def model(self) -> str:
        """The model whose vector space is searched: the adapter's target, if any."""
        return self.embedder.model_name

    @property
    def stamp(self) -> str:
        """What the rows written into this space carry as ``embedding_model``."""
        return self._adapter.stamp if self._adapter else self._querying.model_name

    @property
    def cold_collection(self) -> str:
        return cold_collection_name(self._prefix, self.model)

    async def current(self) -> str:
        """The collection, resolved (under the lock) if it was not yet."""
        if self.collection is None:
            async with self._lock:
                return await self.ready()
        return self.collection

    async def ready(self) -> str:
        """The collection, resolved now if it was not yet; call it with the lock held."""
        if self.collection is None:
            await self._link.connect()
            self.collection = await self._link.call(self._setup_sync)
        return self.collection

    def create_sync(self, name: str) -> None:
        """A collection of this space (blocks: in the link's threads)."""
        create_collection(
            self._link.client(),
            name,
            model=self.model,
            dimension=self.embedder.dimension,
            timeout_s=self._link.timeout_s,
        )

    def _setup_sync(self) -> str:
        client = self._link.client()
        for attempt in range(_SETUP_ATTEMPTS):
            try:
                if self._alias not in client.list_aliases().get("aliases", []):
                    name = collection_name(self._prefix, self.model, self._clock())
                    if not client.has_collection(name):
                        self.create_sync(name)
                    client.create_alias(name, self._alias)
                break
            except MilvusException:
                # Replicas starting together race to create the same collection and
                # alias; the loser's call fails. Look again: the winner's is as good.
                if attempt == _SETUP_ATTEMPTS - 1:
                    raise
                time.sleep(0.2 * (attempt + 1))
        name = str(client.describe_alias(self._alias)["collection_name"])
        check_model(
            client,
            name,
            model=self.model,
            dimension=self.embedder.dimension,
            via=self._alias,
            querying=self._querying.model_name,
        )
        client.load_collection(name, timeout=self._link.timeout_s)
        return name
