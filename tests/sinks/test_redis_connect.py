"""Reaching Redis through Sentinel: the settings' addresses, and a store on a real Sentinel.

The Sentinel and its primary are started here (``ReplicatedRedis``); the URL given
beside them names a port nothing listens on, so only the Sentinel can have found
the primary.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from slotwise.sinks.redis_store import RedisStore
from slotwise.streams.replicated_redis import MASTER_NAME, ReplicatedRedis
from slotwise.streams.settings import Settings
from slotwise.streams.testing import free_port


def test_sentinel_addresses_are_read_from_one_setting() -> None:
    settings = Settings(redis_sentinels=" s1:26380, s2 ,,10.0.0.3:5000")
    assert settings.sentinel_addresses() == [("s1", 26380), ("s2", 26379), ("10.0.0.3", 5000)]
    assert Settings(redis_sentinels=None).sentinel_addresses() == []


@pytest.mark.redis
def test_a_store_finds_its_primary_through_the_sentinels(tmp_path: Path) -> None:
    async def scenario(sentinels: list[tuple[str, int]]) -> None:
        nowhere = f"redis://127.0.0.1:{free_port()}/0"
        store = RedisStore.from_url(
            nowhere, prefix=f"t{uuid.uuid4().hex[:8]}", sentinels=sentinels, master=MASTER_NAME
        )
        try:
            assert await store.ping()
            assert await store.version("user-1") == 0
        finally:
            await store.close()

    with ReplicatedRedis(tmp_path, replicas=0, sentinels=1) as nodes:
        asyncio.run(
            scenario(Settings(redis_sentinels=nodes.sentinel_addresses).sentinel_addresses())
        )
