"""How every slotwise part reaches Milvus: one client, its own threads, strong reads.

pymilvus blocks, so each part that talks to Milvus (the index, the tiers, the
erasure) runs its calls on threads of its own: a search waiting on Milvus must
not queue behind (or hold up) other blocking work of the process, nor an
erasure's deletes behind the write path's. A :class:`MilvusLink` is that: a
client made on first use, a thread pool, :meth:`MilvusLink.call` to run a
function there with Milvus's errors raised as
:class:`~slotwise.sinks.exceptions.VectorIndexError`, and reads that ask for
``READ_CONSISTENCY`` (Strong: every write acknowledged before is seen) and
load a collection Milvus has released (Milvus Lite forgets which collections
were loaded when it restarts; a cold tier nobody searched was never loaded).

The read methods (:meth:`MilvusLink.query`, ...) block: call them in the
link's threads (inside a function given to :meth:`MilvusLink.call`).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, TypeVar

from pymilvus import MilvusClient, MilvusException

from slotwise.sinks.exceptions import VectorIndexError
from slotwise.sinks.milvus.collections import GRPC_OPTIONS, READ_CONSISTENCY

__all__ = ["NOT_LOADED", "MilvusLink", "loaded"]

T = TypeVar("T")

NOT_LOADED = 101  # Milvus's CollectionNotLoaded


def loaded(
    client: MilvusClient,
    collection: str,
    call: Callable[[MilvusClient], T],
    *,
    timeout_s: float | None = None,
) -> T:
    """Run a read, loading ``collection`` first if Milvus has released it."""
    try:
        return call(client)
    except MilvusException as exc:
        if exc.code != NOT_LOADED:
            raise
    client.load_collection(collection, timeout=timeout_s)
    return call(client)


class MilvusLink:
    """One client of Milvus at ``uri`` and the threads its calls run on.

    ``name`` names the threads and, in errors, the part (``milvus``, ``milvus tiers``).
    """

    def __init__(
        self,
        uri: str,
        *,
        token: str | None = None,
        timeout_s: float = 10.0,
        threads: int = 2,
        name: str = "milvus",
    ) -> None:
        self.uri = uri
        self.timeout_s = timeout_s
        self._token = token or ""
        self._name = name
        self._client: MilvusClient | None = None
        self._threads = ThreadPoolExecutor(threads, thread_name_prefix=f"slotwise-{name}")

    @property
    def executor(self) -> Executor:
        """The link's threads, for blocking work beside its calls (embedding)."""
        return self._threads

    def client(self) -> MilvusClient:
        """The client, made on first use (blocks: call it in the link's threads)."""
        if self._client is None:
            self._client = MilvusClient(
                uri=self.uri, token=self._token, timeout=self.timeout_s, grpc_options=GRPC_OPTIONS
            )
        return self._client

    async def connect(self) -> MilvusClient:
        return await self.call(self.client)

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in the link's threads, Milvus's errors as VectorIndexError."""
        try:
            return await self.in_thread(fn, *args, **kwargs)
        except MilvusException as exc:
            raise VectorIndexError(f"{self._name} at {self.uri}: {exc}") from exc

    async def in_thread(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in the link's threads, its errors as they are."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, functools.partial(fn, *args, **kwargs))

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await self.in_thread(client.close)
        self._threads.shutdown(wait=False)

    # -- strong reads (blocking) ---------------------------------------------------

    def query(
        self, collection: str, *, output_fields: Sequence[str], where: str = ""
    ) -> list[dict[str, Any]]:
        return loaded(
            self.client(),
            collection,
            lambda c: c.query(
                collection,
                filter=where,
                output_fields=list(output_fields),
                consistency_level=READ_CONSISTENCY,
                timeout=self.timeout_s,
            ),
            timeout_s=self.timeout_s,
        )

    def count(self, collection: str, where: str = "") -> int:
        """Rows of ``collection`` matching ``where`` (every row without one)."""
        rows = self.query(collection, where=where, output_fields=["count(*)"])
        return int(rows[0]["count(*)"]) if rows else 0

    def get(
        self, collection: str, ids: Sequence[str], output_fields: Sequence[str]
    ) -> list[dict[str, Any]]:
        return loaded(
            self.client(),
            collection,
            lambda c: c.get(
                collection,
                ids=list(ids),
                output_fields=list(output_fields),
                consistency_level=READ_CONSISTENCY,
                timeout=self.timeout_s,
            ),
            timeout_s=self.timeout_s,
        )

    def search(
        self,
        collection: str,
        data: list[list[float]],
        *,
        limit: int,
        where: str,
        output_fields: Sequence[str],
    ) -> list[list[dict[str, Any]]]:
        """Cosine neighbours of each vector of ``data``, one list per vector."""
        result = loaded(
            self.client(),
            collection,
            lambda c: c.search(
                collection,
                data=data,
                limit=limit,
                filter=where,
                output_fields=list(output_fields),
                search_params={"metric_type": "COSINE"},
                consistency_level=READ_CONSISTENCY,
                timeout=self.timeout_s,
            ),
            timeout_s=self.timeout_s,
        )
        return [list(hits) for hits in result]

    def pages(
        self, collection: str, *, where: str, output_fields: Sequence[str], batch_size: int = 1000
    ) -> list[list[dict[str, Any]]]:
        """Every row matching ``where``, read page by page (a query's result is bounded)."""
        iterator = loaded(
            self.client(),
            collection,
            lambda c: c.query_iterator(
                collection,
                batch_size=batch_size,
                filter=where,
                output_fields=list(output_fields),
                consistency_level=READ_CONSISTENCY,
                timeout=self.timeout_s,
            ),
            timeout_s=self.timeout_s,
        )
        found: list[list[dict[str, Any]]] = []
        try:
            while page := iterator.next():
                found.append(list(page))
        finally:
            iterator.close()
        return found
