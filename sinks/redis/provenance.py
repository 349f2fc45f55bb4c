"""What the background jobs keep about a subject's facts, besides the facts.

Built on :class:`~slotwise.sinks.redis.store.RedisStore`; per subject, under
the subject's hash tag (a subject's erasure finds them with the rest)::

    <prefix>:{<subject>}:dependents  zset  "<source>\\0<derived>" per derived_from link, score 0
    <prefix>:{<subject>}:compared    set   pair keys a consolidation pass asked about

The provenance index is the reverse of ``Fact.derived_from``: which facts were
derived from a fact, one lexicographic range per source, so the depth-bounded
walk reads one hop of any width in one round trip. It is written after the
event that stored the derived fact, idempotently (a replay adds the same
members), and before any later event of the subject is decided.

``compared`` only saves model calls (a pair asked once is not asked again);
losing it costs a pass calls, never a wrong decision.

:meth:`RedisProvenance.head` follows a supersession chain to its current
head in one Lua call (``lua/head.lua``): a read of a fact three supersessions
old costs what a read of the current one does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass

from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import COMPARED, DEPENDENTS, FACTS, KeyLayout
from slotwise.sinks.redis.replies import as_bytes, decode_fact
from slotwise.sinks.redis.scripts import lua_script
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.records import Fact

__all__ = ["MAX_HOPS", "Head", "RedisProvenance", "chain_head"]

MAX_HOPS = 64


@dataclass(frozen=True, slots=True)
class Head:
    """The current head of a chain, and every fact id on the way (asked first, head last)."""

    fact: Fact
    chain: tuple[str, ...]


class RedisProvenance:
    """Implements ``processors.provenance.DependentsReader``."""

    def __init__(self, store: RedisStore, *, prefix: str) -> None:
        self._store = store
        self._redis = store.client
        self._layout = KeyLayout(prefix)

    async def dependents(
        self, subject_id: str, fact_ids: Sequence[str]
    ) -> Mapping[str, Sequence[str]]:
        key = self._store.key(subject_id, DEPENDENTS)
        with translated("reading provenance"):
            async with self._redis.pipeline(transaction=False) as pipe:
                for fact_id in fact_ids:
                    pipe.zrange(key, f"[{fact_id}\0", f"({fact_id}\1", bylex=True)
                replies = await pipe.execute()
        found: dict[str, tuple[str, ...]] = {}
        for fact_id, members in zip(fact_ids, replies, strict=True):
            cut = len(fact_id) + 1
            if members:
                found[fact_id] = tuple(as_bytes(m).decode()[cut:] for m in members)
        return found

    async def record(self, facts: Iterable[Fact]) -> None:
        """Index the ``derived_from`` links of ``facts`` (any subjects)."""
        by_key: dict[str, dict[str, int]] = {}
        for fact in facts:
            for source in fact.derived_from:
                key = self._store.key(fact.subject_id, DEPENDENTS)
                by_key.setdefault(key, {})[f"{source}\0{fact.fact_id}"] = 0
        if not by_key:
            return
        with translated("indexing provenance"):
            async with self._redis.pipeline(transaction=False) as pipe:
                for key, members in by_key.items():
                    pipe.zadd(key, members)
                await pipe.execute()

    async def compared(self, subject_id: str) -> frozenset[str]:
        with translated("reading compared pairs"):
            members = await self._redis.smembers(self._store.key(subject_id, COMPARED))
        return frozenset(as_bytes(m).decode() for m in members)

    async def remember_compared(self, subject_id: str, keys: Iterable[str]) -> None:
        wanted = list(keys)
        if wanted:
            with translated("recording compared pairs"):
                await self._redis.sadd(self._store.key(subject_id, COMPARED), *wanted)

    async def head(self, subject_id: str, fact_id: str, *, max_hops: int = MAX_HOPS) -> Head | None:
        """Where ``fact_id``'s chain ends now, or None for an unknown fact."""
        return await chain_head(self._store, subject_id, fact_id, max_hops=max_hops)

    async def subjects(self) -> AsyncIterator[str]:
        """Every subject with facts stored (SCAN: incremental, in no particular order)."""
        with translated("listing subjects"):
            async for key in self._redis.scan_iter(
                match=self._layout.kind_pattern(FACTS), count=1000
            ):
                yield self._layout.subject_of(as_bytes(key).decode(), FACTS)


async def chain_head(
    store: RedisStore, subject_id: str, fact_id: str, *, max_hops: int = MAX_HOPS
) -> Head | None:
    """The current head of ``fact_id``'s supersession chain (itself when current), and the
    ids on the way, in one Lua call; None for a fact the subject does not have."""
    key = store.key(subject_id, FACTS)
    script = store.client.register_script(lua_script("head.lua"))
    with translated("following a chain"):
        reply = await script(keys=[key], args=[fact_id, max_hops])
    if not reply:
        return None
    body, *chain = (as_bytes(part) for part in reply)
    return Head(decode_fact(key, body), tuple(c.decode() for c in chain))
