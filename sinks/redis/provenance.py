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
from urllib.parse import unquote

from slotwise.sinks.redis.store import RedisStore, _raw, _script, _translated
from slotwise.topics.records import Fact

__all__ = ["MAX_HOPS", "PROVENANCE_KINDS", "Head", "RedisProvenance", "chain_head"]

PROVENANCE_KINDS = ("dependents", "compared")
MAX_HOPS = 64
_GLOB = str.maketrans({c: "\\" + c for c in "*?[]\\"})


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
        self._prefix = prefix

    async def dependents(
        self, subject_id: str, fact_ids: Sequence[str]
    ) -> Mapping[str, Sequence[str]]:
        key = self._store.key(subject_id, "dependents")
        with _translated("reading provenance"):
            async with self._redis.pipeline(transaction=False) as pipe:
                for fact_id in fact_ids:
                    pipe.zrange(key, f"[{fact_id}\0", f"({fact_id}\1", bylex=True)
                replies = await pipe.execute()
        found: dict[str, tuple[str, ...]] = {}
        for fact_id, members in zip(fact_ids, replies, strict=True):
            cut = len(fact_id) + 1
            if members:
                found[fact_id] = tuple(_raw(m).decode()[cut:] for m in members)
        return found

    async def record(self, facts: Iterable[Fact]) -> None:
        """Index the ``derived_from`` links of ``facts`` (any subjects)."""
        by_key: dict[str, dict[str, int]] = {}
        for fact in facts:
            for source in fact.derived_from:
                key = self._store.key(fact.subject_id, "dependents")
                by_key.setdefault(key, {})[f"{source}\0{fact.fact_id}"] = 0
        if not by_key:
            return
        with _translated("indexing provenance"):
            async with self._redis.pipeline(transaction=False) as pipe:
                for key, members in by_key.items():
                    pipe.zadd(key, members)
                await pipe.execute()

    async def compared(self, subject_id: str) -> frozenset[str]:
        with _translated("reading compared pairs"):
            members = await self._redis.smembers(self._store.key(subject_id, "compared"))
        return frozenset(_raw(m).decode() for m in members)

    async def remember_compared(self, subject_id: str, keys: Iterable[str]) -> None:
        wanted = list(keys)
        if wanted:
            with _translated("recording compared pairs"):
                await self._redis.sadd(self._store.key(subject_id, "compared"), *wanted)

    async def head(self, subject_id: str, fact_id: str, *, max_hops: int = MAX_HOPS) -> Head | None:
        """Where ``fact_id``'s chain ends now, or None for an unknown fact."""
        return await chain_head(self._store, subject_id, fact_id, max_hops=max_hops)

    async def subjects(self) -> AsyncIterator[str]:
        """Every subject with facts stored (SCAN: incremental, in no particular order)."""
        pattern = self._prefix.translate(_GLOB) + ":{*}:facts"
        head, tail = len(self._prefix) + 2, len("}:facts")
        with _translated("listing subjects"):
            async for key in self._redis.scan_iter(match=pattern, count=1000):
                yield unquote(_raw(key).decode()[head:-tail])


async def chain_head(
    store: RedisStore, subject_id: str, fact_id: str, *, max_hops: int = MAX_HOPS
) -> Head | None:
    """The current head of ``fact_id``'s supersession chain (itself when current), and the
    ids on the way, in one Lua call; None for a fact the subject does not have."""
    key = store.key(subject_id, "facts")
    script = store.client.register_script(_script("head.lua"))
    with _translated("following a chain"):
        reply = await script(keys=[key], args=[fact_id, max_hops])
    if not reply:
        return None
    body, *chain = (_raw(part) for part in reply)
    fact = RedisStore._decode(key, body)  # the store's one decoder
    return Head(fact, tuple(c.decode() for c in chain))
