"""The commit marks: recorded over marks at least as high as the writer's last ones, or not
at all, so a store that came back behind keeps saying how far behind it is."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest
import redis
import redis.asyncio as aioredis

from slotwise.sinks.redis.commits import CommitMarks

pytestmark = pytest.mark.redis

P0, P1 = ("cands", 0), ("cands", 1)


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    name = f"swtest-{uuid.uuid4().hex[:8]}"
    yield name
    client = redis.Redis.from_url(redis_url)
    client.delete(f"{name}:commits:g")
    client.close()


def test_a_mark_gone_back_refuses_the_whole_record_and_keeps_the_lower_marks(
    redis_url: str, prefix: str
) -> None:
    async def scenario() -> list[object]:
        client = aioredis.Redis.from_url(redis_url)
        marks = CommitMarks(client, prefix=prefix, group="g")
        seen: list[object] = []
        try:
            seen.append(await marks.record({P0: 10, P1: 4}))  # nothing recorded before
            seen.append(await marks.record({P0: 12, P1: 6}, {P0: 10, P1: 4}))
            # The store comes back behind on P1 (a restart from a short AOF):
            await client.hset(f"{prefix}:commits:g", "cands:1", 5)
            seen.append(await marks.record({P0: 14, P1: 9}, {P0: 12, P1: 6}))
            seen.append(await marks.read([P0, P1]))
            await client.hdel(f"{prefix}:commits:g", "cands:0")  # a mark lost entirely
            seen.append(await marks.record({P0: 14}, {P0: 12}))
            seen.append(await marks.record({P0: 14}))  # a new owner: nothing to compare
            seen.append(await marks.read([P0, P1]))
        finally:
            await client.aclose()
        return seen

    assert asyncio.run(scenario()) == [
        set(),
        set(),
        {P1},
        {P0: 12, P1: 5},
        {P0},
        set(),
        {P0: 14, P1: 5},
    ]


def test_the_store_knows_the_group_from_its_first_mark_to_the_loss_of_all_of_them(
    redis_url: str, prefix: str
) -> None:
    async def scenario() -> list[bool]:
        client = aioredis.Redis.from_url(redis_url)
        marks, other = (CommitMarks(client, prefix=prefix, group=g) for g in ("g", "h"))
        seen: list[bool] = []
        try:
            seen.append(await marks.known())
            await marks.record({P0: 3})
            seen += [await marks.known(), await other.known()]  # one group's marks only
            await client.hdel(f"{prefix}:commits:g", "cands:0")  # the store lost them all
            seen.append(await marks.known())
        finally:
            await client.aclose()
        return seen

    assert asyncio.run(scenario()) == [False, True, False, False]
