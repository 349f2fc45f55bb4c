"""An erasure's checks: look for the scope in every store, and delete again while found.

What is looked at, once the deletes are done (``streams/commands/erase.py``):

* **Milvus**, every collection of the prefix (every model, both tiers): rows of
  the erased fact ids (``by_fact_id``); for a whole subject, any row of it
  (``by_subject``); rows whose text is an erased text, compared as strings
  (``by_text``); and the erased texts searched through the vector index in every
  collection of the worker's model, a hit with an erased id or an erased text
  counting (``milvus-search:<collection>``);
* the worker's **buffer** of rows not yet written, by id and by subject;
* the **embedding cache**, by text: purged right before, since the vector
  search above embeds the texts through it;
* **Redis**, everything the subject's keys hold, stored outputs decoded: erased
  ids and texts, and for a whole subject any key or stored outputs beyond the
  content-free ones; the deployment-wide index of open review items.

Before each look, the keys written outside the subject's log (a read's access
record, the review index) are cleared again (``RedisErasure.sweep``). A look
that finds something waits, deletes again (buffer, Milvus) and looks again, up
to ``attempts`` looks. Every check made is returned, with when it was made: an
attestation reports those and nothing else.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from slotwise.sinks.milvus.erasure import MilvusErasure
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.redis.erasure import RedisErasure
from slotwise.sinks.redis.review import RedisReviews
from slotwise.streams.commands.erase_records import Progress, redis_residue
from slotwise.topics.records import Command, ErasureCheck

__all__ = ["ErasureChecks", "TextCache"]

log = logging.getLogger(__name__)


class TextCache(Protocol):
    """An in-process cache keyed by text (``models.embedders.CachedEmbedder``)."""

    def forget(self, texts: Sequence[str]) -> int: ...

    def holding(self, texts: Sequence[str]) -> int: ...


class ErasureChecks:
    def __init__(
        self,
        redis: RedisErasure,
        vectors: MilvusErasure,
        index: MilvusIndex,
        *,
        cache: TextCache | None,
        reviews: RedisReviews | None,
        wall: Callable[[], datetime],
        attempts: int = 3,
        backoff_s: float = 0.5,
    ) -> None:
        self._redis = redis
        self._vectors = vectors
        self._index = index
        self._cache = cache
        self._reviews = reviews  # the deployment-wide index of open review items
        self._wall = wall
        self._attempts = attempts
        self._backoff_s = backoff_s

    async def run(
        self, command: Command, progress: Progress
    ) -> tuple[list[ErasureCheck], int, dict[str, int]]:
        """Clear what lives outside the log, look, and until nothing is found or the attempts
        are spent, delete again and look again; the last look's checks, the attempts made,
        and what these passes deleted."""
        subject = command.subject_id
        whole = command.fact_id is None and command.attribute is None
        ids = None if whole else progress.ids
        extra: dict[str, int] = {}

        def add(counts: dict[str, int]) -> None:
            for store, count in counts.items():
                if count:
                    extra[store] = extra.get(store, 0) + count

        for attempt in range(1, self._attempts + 1):
            add(
                await self._redis.sweep(
                    subject, whole_subject=whole, ids=progress.ids, texts=progress.texts
                )
            )
            if whole and self._reviews is not None:
                add({"redis:review_index": await self._reviews.forget_subject(subject)})
            if attempt > 1:
                add({"milvus:buffer": await self._index.discard(subject, _set(ids))})
                deleted = await self._vectors.delete(subject, ids)
                add({f"milvus:{name}": rows for name, rows in deleted.items()})
            checks, evicted = await self._look(subject, progress, whole)
            add({"cache:embeddings": evicted})
            if not any(c.found for c in checks):
                return checks, attempt, extra
            log.warning(
                "erasure %s of %r: look %d found %s; deleting again",
                command.command_id,
                subject,
                attempt,
                {c.store: c.found for c in checks if c.found},
            )
            if attempt < self._attempts:
                await asyncio.sleep(self._backoff_s * 2 ** (attempt - 1))
        return checks, self._attempts, extra

    async def _look(
        self, subject: str, progress: Progress, whole: bool
    ) -> tuple[list[ErasureCheck], int]:
        """Every check, in every store; and how many cached texts were evicted."""
        ids, texts, kept = progress.ids, progress.texts, set(progress.kept)
        checks: list[ErasureCheck] = []

        def check(store: str, method: str, looked_for: int, found: int) -> None:
            checks.append(
                ErasureCheck(
                    store=store,
                    method=method,  # type: ignore[arg-type]
                    looked_for=looked_for,
                    found=found,
                    checked_at=self._wall(),
                )
            )

        for name, rows in (await self._vectors.count(subject, ids)).items():
            check(f"milvus:{name}", "by_fact_id", len(ids), rows)
        check("milvus:buffer", "by_fact_id", len(ids), self._index.buffered(subject, set(ids)))
        if whole:
            for name, rows in (await self._vectors.count(subject, None)).items():
                check(f"milvus:{name}", "by_subject", 1, rows)
            check("milvus:buffer", "by_subject", 1, self._index.buffered(subject))
        erased = set(ids)
        wanted = set(texts)
        for name, hits in (await self._vectors.rows_with_text(subject, texts)).items():
            check(f"milvus:{name}", "by_text", len(texts), sum(1 for f in hits if f not in kept))
        for name, near in (await self._vectors.nearest_to_texts(subject, texts)).items():
            left = {f for f, text in near if f in erased or (text in wanted and f not in kept)}
            check(f"milvus-search:{name}", "by_text", len(texts), len(left))
        evicted = 0
        if self._cache is not None:
            # After the search above, which embedded the texts through this cache.
            evicted = await asyncio.to_thread(self._cache.forget, texts)
            held = await asyncio.to_thread(self._cache.holding, texts)
            check("cache:embeddings", "by_text", len(texts), held)
        contents = await self._redis.contents(subject)
        found = await asyncio.to_thread(
            lambda: redis_residue(contents, ids=ids, texts=texts, whole_subject=whole)
        )
        check("redis", "by_fact_id", len(ids), found["by_fact_id"])
        check("redis", "by_text", len(texts), found["by_text"])
        if whole:
            check("redis", "by_subject", 1, found["by_subject"])
            if self._reviews is not None:
                indexed = subject in await self._reviews.open_subjects()
                check("redis:review_index", "by_subject", 1, int(indexed))
        return checks, evicted


def _set(ids: Sequence[str] | None) -> set[str] | None:
    return None if ids is None else set(ids)
