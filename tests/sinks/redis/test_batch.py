"""ScriptBatch against the real Redis server (``redis_url``): what one pipeline of
concurrent script calls does, and what it must not change."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
import redis
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from slotwise.sinks.redis.batch import ScriptBatch

pytestmark = pytest.mark.redis

T = TypeVar("T")

_INCR = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
_FAIL = "return redis.error_reply('refused: ' .. ARGV[1])"


class CountingPool(aioredis.ConnectionPool):
    """A real pool that counts how often a caller takes a connection from it."""

    taken = 0

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        type(self).taken += 1
        return await super().get_connection(*args, **kwargs)


def run(url: str, scenario: Callable[[aioredis.Redis], Awaitable[T]]) -> T:
    async def main() -> T:
        CountingPool.taken = 0
        client = aioredis.Redis(connection_pool=CountingPool.from_url(url))
        try:
            return await scenario(client)
        finally:
            await client.aclose()

    return asyncio.run(main())


def test_calls_of_one_loop_turn_share_one_pipeline(redis_url: str, prefix: str) -> None:
    async def scenario(client: aioredis.Redis) -> tuple[list[int], int, int]:
        batch = ScriptBatch(client, max_calls=100)
        incr = client.register_script(_INCR)
        await batch.call(incr, [f"{prefix}:warm"], [1])  # the script is loaded
        before = CountingPool.taken
        replies = await asyncio.gather(
            *(batch.call(incr, [f"{prefix}:n{i % 7}"], [i]) for i in range(250))
        )
        taken = CountingPool.taken - before
        stored = [int(await client.get(f"{prefix}:n{k}") or 0) for k in range(7)]
        return replies, sum(stored), taken

    replies, total, taken = run(redis_url, scenario)
    assert total == sum(range(250))
    # Each reply is its own call's: the counter it incremented, as it stood then.
    assert all(r >= i for i, r in enumerate(replies))
    assert taken == 3  # 250 calls in pipelines of at most 100


def test_a_failing_call_fails_alone(redis_url: str, prefix: str) -> None:
    async def scenario(client: aioredis.Redis) -> list[Any]:
        batch = ScriptBatch(client)
        incr, fail = client.register_script(_INCR), client.register_script(_FAIL)
        await batch.call(incr, [f"{prefix}:warm"], [1])
        return await asyncio.gather(
            batch.call(incr, [f"{prefix}:a"], [2]),
            batch.call(fail, [f"{prefix}:b"], ["no"]),
            batch.call(incr, [f"{prefix}:a"], [3]),
            return_exceptions=True,
        )

    first, refused, third = run(redis_url, scenario)
    assert (first, third) == (2, 5)
    assert isinstance(refused, ResponseError) and "refused: no" in str(refused)


def test_scripts_the_server_lost_are_loaded_again(redis_url: str, prefix: str) -> None:
    async def scenario(client: aioredis.Redis) -> list[int]:
        batch = ScriptBatch(client)
        incr = client.register_script(_INCR)
        await batch.call(incr, [f"{prefix}:c"], [1])
        await client.script_flush()  # as a restarted or newly promoted server
        return await asyncio.gather(*(batch.call(incr, [f"{prefix}:c"], [1]) for _ in range(5)))

    assert sorted(run(redis_url, scenario)) == [2, 3, 4, 5, 6]


def test_a_call_cancelled_before_it_is_sent_is_never_run(redis_url: str, prefix: str) -> None:
    async def scenario(client: aioredis.Redis) -> tuple[int, bool]:
        batch = ScriptBatch(client)
        incr = client.register_script(_INCR)
        await batch.call(incr, [f"{prefix}:d"], [1])
        doomed = asyncio.ensure_future(batch.call(incr, [f"{prefix}:d"], [100]))
        await asyncio.sleep(0)  # it has queued its call, which has not left
        doomed.cancel()
        kept = await batch.call(incr, [f"{prefix}:d"], [10])
        return kept, doomed.cancelled()

    assert run(redis_url, scenario) == (11, True)


def test_a_lost_server_fails_every_call_of_the_pipeline() -> None:
    async def scenario() -> list[Any]:
        client = aioredis.Redis(port=1, socket_connect_timeout=0.5)
        batch = ScriptBatch(client)
        incr = client.register_script(_INCR)
        try:
            return await asyncio.gather(
                *(batch.call(incr, ["k"], [1]) for _ in range(3)), return_exceptions=True
            )
        finally:
            await client.aclose()

    failures = asyncio.run(scenario())
    assert len(failures) == 3
    assert all(isinstance(f, redis.ConnectionError) for f in failures)
