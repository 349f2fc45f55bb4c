"""Reaching Redis through Sentinel: the settings' addresses, and a store on a real Sentinel.

The Sentinel and its primary are started here (``ReplicatedRedis``); the URL given
beside them names a port nothing listens on, so only the Sentinel can have found
the primary.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from slotwise.sinks.exceptions import StoreUnavailable
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import Settings
from slotwise.streams.dev.replicated_redis import MASTER_NAME, ReplicatedRedis
from slotwise.streams.dev.testing import free_port


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


@pytest.mark.redis
def test_the_store_sees_a_restart_of_its_server_as_a_new_generation(tmp_path: Path) -> None:
    """A restart loses what the AOF had not synced: the store tells it from a new
    ``run_id``; a reconnect to the same process is no change."""
    with ReplicatedRedis(tmp_path, replicas=0) as nodes:

        async def connected(store: RedisStore) -> int:
            assert await store.ping()
            return store.identity.generation

        async def scenario() -> list[int]:
            store = RedisStore.from_url(nodes.primary.url, prefix=f"t{uuid.uuid4().hex[:8]}")
            try:
                seen = [await connected(store)]
                await store.client.connection_pool.disconnect()  # the same server again
                seen.append(await connected(store))
                nodes.primary.kill()
                nodes.primary.start()
                nodes.primary.wait_ready()
                with contextlib.suppress(StoreUnavailable):
                    await store.ping()  # the pooled connection died with the old process
                seen.append(await connected(store))
                return seen
            finally:
                await store.close()

        assert asyncio.run(scenario()) == [0, 0, 1]


@pytest.mark.redis
def test_applies_are_fenced_to_the_accepted_server_until_the_new_one_is_accepted(
    tmp_path: Path,
) -> None:
    """An event still running when the server changed must not land there before the
    replay of what the old one lost: its apply is refused, and writes nothing."""
    subject = "user-1"
    now = datetime(2026, 3, 14, tzinfo=UTC)

    async def apply(store: RedisStore, event_id: str) -> None:
        version = await store.version(subject)
        await store.apply(
            subject, event_id, expected_version=version, facts=[], outputs=b"{}", now=now
        )

    with ReplicatedRedis(tmp_path, replicas=0) as nodes:

        async def scenario() -> list[int]:
            store = RedisStore.from_url(nodes.primary.url, prefix=f"t{uuid.uuid4().hex[:8]}")
            try:
                store.identity.accept()
                await apply(store, "e1")
                nodes.primary.kill()  # fsync everysec: e1 may or may not survive
                nodes.primary.start()
                nodes.primary.wait_ready()
                with contextlib.suppress(StoreUnavailable):
                    await store.ping()
                before = await store.version(subject)
                with pytest.raises(StoreUnavailable, match="server changed"):
                    await apply(store, "e2")
                fenced = await store.version(subject)
                store.identity.accept()
                await apply(store, "e2")
                return [before, fenced, await store.version(subject) - before]
            finally:
                await store.close()

        before, fenced, added = asyncio.run(scenario())
        assert fenced == before and added == 1
