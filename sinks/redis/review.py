"""Review items in Redis: what a human can list and decide, and what they rejected.

Built on :class:`~slotwise.sinks.redis.store.RedisStore` (its client and key
names). Per subject, under the subject's hash tag, so a subject's erasure
finds them with the rest of its keys::

    <prefix>:{<subject>}:review       hash  review_id → ReviewItem JSON (latest state)
    <prefix>:{<subject>}:review_open  zset  review_id of every open item, by created_at (ms)
    <prefix>:{<subject>}:rejected     set   rejection keys (processors.review_policy)

and one key for the whole deployment, so ``slotwise review list`` and
``review accept ID`` need no subject::

    <prefix>:review_index             hash  review_id → subject_id, open items only

Items are filed from the outputs of the event that produced them (a REVIEW
decision, a consolidation finding, a resolution record), after that event's
state change and idempotently by ``review_id``: a replay files the same item
again and changes nothing, and a resolved item is final (``lua/review.lua``).
The deployment-wide index is a second call (Redis Cluster runs a script on
one hash slot only); it follows each item's state after the script, so a
crash between the two calls is repaired by the replay that follows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import cast

from slotwise.sinks.exceptions import CorruptRecord
from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import REJECTED, REVIEW, REVIEW_KINDS, REVIEW_OPEN, KeyLayout
from slotwise.sinks.redis.replies import as_bytes
from slotwise.sinks.redis.scripts import lua_script
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.codec import decode_record, encode_record
from slotwise.topics.exceptions import RecordError
from slotwise.topics.records import ReviewItem

__all__ = ["RedisReviews"]


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


class RedisReviews:
    """Open and resolved review items per subject; implements ``processors.guards.Rejections``."""

    def __init__(self, store: RedisStore, *, prefix: str) -> None:
        self._store = store
        self._redis = store.client
        self._index = KeyLayout(prefix).review_index
        self._file = self._redis.register_script(lua_script("review.lua"))

    def _keys(self, subject_id: str) -> list[str]:
        return [self._store.key(subject_id, kind) for kind in REVIEW_KINDS]

    async def file(
        self, items: Sequence[ReviewItem], rejections: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        """File new items and resolution records (``rejections``: keys by review_id)."""
        by_subject: dict[str, list[ReviewItem]] = {}
        for item in items:
            by_subject.setdefault(item.subject_id, []).append(item)
        for subject_id, mine in by_subject.items():
            args: list[str | bytes | int] = []
            for item in mine:
                keys = list((rejections or {}).get(item.review_id, ()))
                args += [item.review_id, item.status, _ms(item.created_at), encode_record(item)]
                args += [len(keys), *keys]
            with translated("filing review items"):
                states = await self._file(keys=self._keys(subject_id), args=args)
                async with self._redis.pipeline(transaction=False) as pipe:
                    for item, is_open in zip(mine, states, strict=True):
                        if int(is_open):
                            pipe.hset(self._index, item.review_id, subject_id)
                        else:
                            pipe.hdel(self._index, item.review_id)
                    await pipe.execute()

    async def get(self, subject_id: str, review_id: str) -> ReviewItem | None:
        key = self._store.key(subject_id, REVIEW)
        with translated("reading a review item"):
            body = await self._redis.hget(key, review_id)
        return None if body is None else self._decode(key, as_bytes(body))

    async def open_items(self, subject_id: str) -> list[ReviewItem]:
        """The subject's open items, oldest first."""
        key, open_key = (
            self._store.key(subject_id, REVIEW),
            self._store.key(subject_id, REVIEW_OPEN),
        )
        with translated("listing review items"):
            ids = cast(list[bytes], await self._redis.zrange(open_key, 0, -1))
            bodies = await self._redis.hmget(key, ids) if ids else []
        return [self._decode(key, as_bytes(b)) for b in bodies if b is not None]

    async def locate(self, review_id: str) -> str | None:
        """The subject of an open item, or None (unknown, or resolved already)."""
        with translated("locating a review item"):
            subject = await self._redis.hget(self._index, review_id)
        return None if subject is None else as_bytes(subject).decode()

    async def open_subjects(self) -> list[str]:
        """Every subject with an open item, sorted."""
        with translated("listing subjects under review"):
            subjects = await self._redis.hvals(self._index)
        return sorted({as_bytes(s).decode() for s in subjects})

    async def rejections(self, subject_id: str) -> frozenset[str]:
        """Every rejection key of the subject (a pass skips what a human rejected)."""
        with translated("reading rejections"):
            members = await self._redis.smembers(self._store.key(subject_id, REJECTED))
        return frozenset(as_bytes(m).decode() for m in members)

    async def rejected(self, subject_id: str, keys: Sequence[str]) -> frozenset[str]:
        if not keys:
            return frozenset()
        with translated("reading rejections"):
            hits = await self._redis.smismember(self._store.key(subject_id, REJECTED), list(keys))
        return frozenset(k for k, hit in zip(keys, hits, strict=True) if hit)

    async def forget_subject(self, subject_id: str) -> int:
        """Drop the subject's entries from the deployment-wide index (for an erasure,
        which deletes the subject's own keys, before or after it); entries removed."""
        wanted = subject_id.encode()
        with translated("unindexing a subject's review items"):
            mine = [
                review_id
                async for review_id, subject in self._redis.hscan_iter(self._index, count=1000)
                if as_bytes(subject) == wanted
            ]
            return int(await self._redis.hdel(self._index, *mine)) if mine else 0

    @staticmethod
    def _decode(key: str, body: bytes) -> ReviewItem:
        try:
            record = decode_record(body, expect=(ReviewItem,))
        except RecordError as exc:
            raise CorruptRecord(
                f"{key}: a stored review item does not decode: {exc}", key=key
            ) from exc
        if not isinstance(record, ReviewItem):
            raise CorruptRecord(f"{key}: holds a {type(record).__name__}", key=key)
        return record
