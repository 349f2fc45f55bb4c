"""The deployment's Redis store, as every process opens it: by URL, or through Sentinel."""

from __future__ import annotations

from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import RedisSettings

__all__ = ["open_store"]


def open_store(settings: RedisSettings, *, prefix: str | None = None) -> RedisStore:
    """A store on its own pool (closed by ``store.close()``); ``prefix`` defaults to the
    deployment's."""
    return RedisStore.from_url(
        settings.redis_url,
        prefix=settings.redis_prefix if prefix is None else prefix,
        sentinels=settings.sentinel_addresses(),
        master=settings.redis_sentinel_master,
    )
