"""Erasure in Milvus: delete a subject's rows, and look for any left, in every collection.

Every collection of the deployment's prefix that holds subjects' rows is
covered: each embedding model's collections (whatever their date, behind the
alias or not) and the cold tiers. They are found by name and schema
(``milvus_collections.subject_collections``) at each call, never from a list,
so a model version or a tier added after this code was written is erased too.

Every call filters on the subject (the partition key); a scoped erase adds its
fact ids. Deletes are idempotent (deleting what is gone deletes nothing), so
an erasure interrupted by a crash simply deletes again. Each collection is
flushed after its delete, so the delete is durable before it is attested.

The rows buffered in the worker's :class:`~slotwise.sinks.milvus.index.MilvusIndex`
are not here: the index drops those (``MilvusIndex.discard``).

The looks, for the checks an erasure makes after deleting:

* :meth:`MilvusErasure.count` — rows of the subject, or of its fact ids;
* :meth:`MilvusErasure.rows_with_text` — rows of the subject whose text is
  one of the erased texts, compared as exact strings, in every collection
  (a collection of another model cannot be searched with this one's vectors,
  but its rows' texts can be read);
* :meth:`MilvusErasure.nearest_to_texts` — the erased texts embedded with
  this worker's model and searched in every collection of that model: the
  vector index asked the question a reader would ask.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pymilvus import MilvusClient

from slotwise.processors.ports import Embedder
from slotwise.sinks.milvus.client import MilvusLink
from slotwise.sinks.milvus.collections import (
    MODEL_PROPERTY,
    among,
    fit_text,
    of_subject,
    subject_collections,
)
from slotwise.sinks.milvus.engine import hit_fact_id

__all__ = ["MilvusErasure"]

_IDS_PER_CALL = 1000
_TEXTS_PER_SEARCH = 256
_ROWS_PER_PAGE = 1000


def _batches(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for first in range(0, len(items), size):
        yield items[first : first + size]


class MilvusErasure:
    """Deletes and finds a subject's rows in every collection of ``prefix``.

    It has its own client and threads: an erasure's deletes and searches must not
    queue behind the write path's (nor hold them up).
    """

    def __init__(
        self,
        uri: str,
        embedder: Embedder,
        *,
        token: str | None = None,
        prefix: str = "facts",
        timeout_s: float = 60.0,
    ) -> None:
        self._link = MilvusLink(uri, token=token, timeout_s=timeout_s, name="erasure")
        self._embedder = embedder
        self._prefix = prefix
        self._timeout_s = timeout_s

    async def close(self) -> None:
        await self._link.close()

    async def collections(self) -> list[str]:
        return await self._link.call(lambda: subject_collections(self._link.client(), self._prefix))

    async def count(self, subject_id: str, fact_ids: Sequence[str] | None) -> dict[str, int]:
        """Rows of the subject (of ``fact_ids`` only, unless None), per collection."""
        return dict(await self._link.call(self._count_sync, subject_id, fact_ids))

    async def delete(self, subject_id: str, fact_ids: Sequence[str] | None) -> dict[str, int]:
        """Delete the subject's rows (``fact_ids``' only, unless None) everywhere; the rows
        each collection held before, per collection."""
        return dict(await self._link.call(self._delete_sync, subject_id, fact_ids))

    async def rows_with_text(self, subject_id: str, texts: Sequence[str]) -> dict[str, list[str]]:
        """Per collection, the fact ids of the subject's rows holding one of ``texts``."""
        if not texts:
            return {}
        return dict(await self._link.call(self._texts_sync, subject_id, texts))

    async def nearest_to_texts(
        self, subject_id: str, texts: Sequence[str], *, k: int = 5
    ) -> dict[str, list[tuple[str, str]]]:
        """Per collection of this worker's model, ``(fact_id, text)`` of the subject's ``k``
        nearest rows to each of ``texts``."""
        if not texts:
            return {}
        vectors: list[list[float]] = []
        for batch in _batches(texts, _TEXTS_PER_SEARCH):
            vectors += await self._link.in_thread(self._embedder.embed, list(batch))
        return dict(await self._link.call(self._search_sync, subject_id, vectors, k))

    # -- in a worker thread ---------------------------------------------------

    def _filters(self, subject_id: str, fact_ids: Sequence[str] | None) -> list[str]:
        subject = of_subject(subject_id)
        if fact_ids is None:
            return [subject]
        return [f"{subject} and {among(b)}" for b in _batches(fact_ids, _IDS_PER_CALL)]

    def _count_sync(self, subject_id: str, fact_ids: Sequence[str] | None) -> dict[str, int]:
        client = self._link.client()
        counts: dict[str, int] = {}
        for name in subject_collections(client, self._prefix):
            counts[name] = 0
            for where in self._filters(subject_id, fact_ids):
                counts[name] += self._link.count(name, where)
        return counts

    def _delete_sync(self, subject_id: str, fact_ids: Sequence[str] | None) -> dict[str, int]:
        client = self._link.client()
        held = self._count_sync(subject_id, fact_ids)
        for name, rows in held.items():
            if not rows:
                continue
            for where in self._filters(subject_id, fact_ids):
                client.delete(name, filter=where, timeout=self._timeout_s)
            client.flush(name, timeout=self._timeout_s)
        return held

    def _texts_sync(self, subject_id: str, texts: Sequence[str]) -> dict[str, list[str]]:
        wanted = {fit_text(t) for t in texts}
        found: dict[str, list[str]] = {}
        for name, held in self._count_sync(subject_id, None).items():
            found[name] = []
            if not held:
                continue
            # Every row of the subject is read and compared here: a text is user input,
            # and no filter expression has to quote it.
            pages = self._link.pages(
                name,
                batch_size=_ROWS_PER_PAGE,
                where=of_subject(subject_id),
                output_fields=["fact_id", "text"],
            )
            found[name] = [str(r["fact_id"]) for page in pages for r in page if r["text"] in wanted]
        return found

    def _search_sync(
        self, subject_id: str, vectors: list[list[float]], k: int
    ) -> dict[str, list[tuple[str, str]]]:
        client = self._link.client()
        found: dict[str, list[tuple[str, str]]] = {}
        for name in subject_collections(client, self._prefix):
            if not self._same_model(client, name):
                continue
            hits: list[tuple[str, str]] = []
            for first in range(0, len(vectors), _TEXTS_PER_SEARCH):
                batch = vectors[first : first + _TEXTS_PER_SEARCH]
                result = self._link.search(
                    name,
                    batch,
                    limit=k,
                    where=of_subject(subject_id),
                    output_fields=["fact_id", "text"],
                )
                hits += [(hit_fact_id(h), str(h["entity"]["text"])) for q in result for h in q]
            found[name] = hits
        return found

    def _same_model(self, client: MilvusClient, name: str) -> bool:
        described = client.describe_collection(name)
        stamped = described.get("properties", {}).get(MODEL_PROPERTY)
        dims = [f["params"].get("dim") for f in described["fields"] if f["name"] == "vector"]
        same_dim = bool(dims) and int(dims[0]) == self._embedder.dimension
        return same_dim and stamped in (None, self._embedder.model_name)
