"""Fitted drift adapters and the one enabled for the deployment, in Redis.

    <prefix>:adapter:<version>   hash  blob (the adapter's bytes), stamp, fitted_at,
                                       held_out (JSON: the fact ids kept out of the fit),
                                       validation (JSON of the last ``validate``)
    <prefix>:adapter:enabled     string  the version the workers search through

Why Redis and not a compacted topic: an adapter is one ~1 MB value read once
by each process at start-up and changed by a person a few times per upgrade;
Redis (with AOF, as the stack runs it) holds it durably next to the rest of
the deployment's hot state and answers that read in one round trip, where a
topic would make every worker and ``serve`` read a partition to its end
before its first search. Nothing here changes a subject's facts, so nothing
needs the subjects' ordered log.
"""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from slotwise.processors.drift_adapter import DriftAdapter
from slotwise.sinks.exceptions import AdapterNotFound
from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import KeyLayout
from slotwise.sinks.redis.replies import as_bytes
from slotwise.sinks.redis.store import RedisStore

__all__ = ["AdapterStore"]

_Field = bytes | bytearray | memoryview | str | int | float  # what redis-py's hset takes


class AdapterStore:
    """Adapters by version, on a store's client and prefix."""

    def __init__(self, store: RedisStore, prefix: str) -> None:
        self._redis = store.client
        self._layout = KeyLayout(prefix)

    def _key(self, version: str) -> str:
        return self._layout.adapter(version)

    @property
    def _enabled_key(self) -> str:
        return self._layout.enabled_adapter

    async def save(
        self, adapter: DriftAdapter, *, held_out: list[str], now: datetime | None = None
    ) -> str:
        fields: dict[_Field, _Field] = {
            "blob": adapter.to_bytes(),
            "stamp": adapter.stamp,
            "fitted_at": (now or datetime.now(UTC)).isoformat(),
            "held_out": orjson.dumps(held_out),
        }
        with translated("storing an adapter"):
            await self._redis.hset(self._key(adapter.version), mapping=fields)
        return adapter.version

    async def held_out(self, version: str) -> list[str]:
        await self.load(version)
        with translated("reading an adapter's held-out facts"):
            raw = await self._redis.hget(self._key(version), "held_out")
        return [] if raw is None else [str(f) for f in orjson.loads(raw)]

    async def load(self, version: str) -> DriftAdapter:
        with translated("reading an adapter"):
            raw = await self._redis.hget(self._key(version), "blob")
        if raw is None:
            raise AdapterNotFound(f"no adapter {version} (fit one: slotwise migrate adapter fit)")
        return DriftAdapter.from_bytes(as_bytes(raw))

    async def record_validation(self, version: str, report: dict[str, object]) -> None:
        await self.load(version)
        with translated("storing an adapter's validation"):
            await self._redis.hset(self._key(version), "validation", orjson.dumps(report))

    async def validation(self, version: str) -> dict[str, object] | None:
        with translated("reading an adapter's validation"):
            raw = await self._redis.hget(self._key(version), "validation")
        return None if raw is None else dict(orjson.loads(raw))

    async def enable(self, version: str) -> DriftAdapter:
        adapter = await self.load(version)
        with translated("enabling an adapter"):
            await self._redis.set(self._enabled_key, version)
        return adapter

    async def disable(self) -> str | None:
        """Disable the enabled adapter; its version, or None if none was."""
        with translated("disabling the adapter"):
            raw = await self._redis.getdel(self._enabled_key)
        return None if raw is None else as_bytes(raw).decode()

    async def enabled(self) -> DriftAdapter | None:
        with translated("reading the enabled adapter"):
            raw = await self._redis.get(self._enabled_key)
        return None if raw is None else await self.load(as_bytes(raw).decode())
