"""The state of a dual-index embedding migration, in Redis.

    <prefix>:migration   hash  step, from_model, from_spec, from_collection,
                               to_model, to_spec, to_collection, started_at,
                               backfill_cursor, backfilled, backfill_done,
                               switched_at, rolled_back_at, finished_at, validation

One migration per deployment at a time. ``step`` is one of ``dual-writing``
(from ``start`` until ``switch``), ``switched``, ``rolled-back`` and
``finished``; while it is not ``finished`` every worker writes each vector row
to both collections (``streams/migration/watch.py``). Each field is written by
one step, so re-running a step after a crash writes the same values again.
The backfill cursor is the last fact id whose batch is written to the new
collection: a restart resumes after it and re-writes at most one batch.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, fields
from datetime import datetime

import orjson
from redis.exceptions import WatchError

from slotwise.sinks.exceptions import StoreError
from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import KeyLayout
from slotwise.sinks.redis.replies import as_bytes
from slotwise.sinks.redis.store import RedisStore

__all__ = ["DUAL_WRITING_STEPS", "Migration", "MigrationStore"]

DUAL_WRITING_STEPS = frozenset({"dual-writing", "switched", "rolled-back"})


@dataclass(frozen=True)
class Migration:
    """One migration from the collection of ``from_model`` to that of ``to_model``."""

    step: str
    from_model: str
    from_spec: str
    from_collection: str
    to_model: str
    to_spec: str
    to_collection: str
    started_at: str
    backfill_cursor: str = ""
    backfilled: int = 0
    backfill_done: bool = False
    switched_at: str = ""
    rolled_back_at: str = ""
    finished_at: str = ""
    validation: str = ""

    @property
    def dual_writing(self) -> bool:
        return self.step in DUAL_WRITING_STEPS

    @property
    def validated(self) -> bool:
        """The last ``validate`` passed."""
        return bool(self.validation) and bool(orjson.loads(self.validation).get("passed"))

    def spec_of(self, model: str) -> str:
        """The embedder setting (``SLOTWISE_EMBEDDER``) that embeds ``model``'s vectors."""
        return self.to_spec if model == self.to_model else self.from_spec

    def other(self, collection: str) -> tuple[str, str] | None:
        """The pair's other collection and its model; None if ``collection`` is not in it."""
        if collection == self.from_collection:
            return self.to_collection, self.to_model
        if collection == self.to_collection:
            return self.from_collection, self.from_model
        return None

    @staticmethod
    def at(moment: datetime) -> str:
        return moment.isoformat()


_Field = bytes | bytearray | memoryview | str | int | float  # what redis-py's hset takes
_INTS = {"backfilled"}
_BOOLS = {"backfill_done"}


class MigrationStore:
    """The deployment's migration, on a store's client and prefix."""

    def __init__(self, store: RedisStore, prefix: str) -> None:
        self._redis = store.client
        self._key = KeyLayout(prefix).migration

    async def get(self) -> Migration | None:
        with translated("reading the migration"):
            raw = await self._redis.hgetall(self._key)
        if not raw:
            return None
        values = {as_bytes(k).decode(): as_bytes(v).decode() for k, v in raw.items()}
        known = {f.name for f in fields(Migration)}
        parsed: dict[str, object] = {}
        for name, value in values.items():
            if name not in known:
                continue
            if name in _INTS:
                parsed[name] = int(value)
            elif name in _BOOLS:
                parsed[name] = value == "1"
            else:
                parsed[name] = value
        return Migration(**parsed)  # type: ignore[arg-type]

    async def begin(self, migration: Migration) -> Migration:
        """Record ``migration`` unless one is under way; the one recorded either way."""
        mapping: dict[_Field, _Field] = {
            f.name: getattr(migration, f.name)
            for f in fields(Migration)
            if f.name not in _INTS | _BOOLS and getattr(migration, f.name) != ""
        }
        with translated("starting a migration"):
            async with self._redis.pipeline(transaction=True) as pipe:
                # Replaced only when none is there or the last one is finished; a
                # concurrent start wins the race and this one reads its record.
                await pipe.watch(self._key)
                step = await pipe.hget(self._key, "step")
                if step is None or as_bytes(step) == b"finished":
                    pipe.multi()  # type: ignore[no-untyped-call]
                    pipe.delete(self._key)
                    pipe.hset(self._key, mapping=mapping)
                    with contextlib.suppress(WatchError):
                        await pipe.execute()
        recorded = await self.get()
        if recorded is None:
            raise StoreError("the migration record vanished as it was written")
        return recorded

    async def update(self, **values: str | int | bool) -> None:
        known = {f.name for f in fields(Migration)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"not migration fields: {sorted(unknown)}")
        mapping: dict[_Field, _Field] = {
            k: ("1" if v else "0") if isinstance(v, bool) else v for k, v in values.items()
        }
        with translated("recording a migration step"):
            await self._redis.hset(self._key, mapping=mapping)

    async def record_validation(self, report: dict[str, object]) -> None:
        await self.update(validation=orjson.dumps(report).decode())
