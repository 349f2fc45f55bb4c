"""Access counters against the real Redis: a max and a counter, recorded off the read's path."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from slotwise.sinks.redis.access import AccessHook, RedisAccess
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.read.reads import Reads
from slotwise.topics.records import Fact

pytestmark = [pytest.mark.redis]

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def fact(subject: str, fact_id: str) -> Fact:
    return Fact.model_validate(
        {
            "schema": "fact/1",
            "fact_id": fact_id,
            "subject_id": subject,
            "attribute": None,
            "value": None,
            "text": f"User fact {fact_id}.",
            "category": None,
            "status": "current",
            "valid_from": T0,
            "observed_at": T0,
            "recorded_at": T0,
            "source": "chat",
            "confidence": 0.9,
            "importance": 0.5,
            "candidate_id": f"c-{fact_id}",
        }
    )


def run(redis_url: str, body: object) -> None:
    async def main() -> None:
        prefix = f"t{uuid.uuid4().hex[:8]}"
        store = RedisStore.from_url(redis_url, prefix=prefix)
        try:
            await body(store)  # type: ignore[operator]
        finally:
            keys = [k async for k in store.client.scan_iter(match=f"{prefix}:*")]
            if keys:
                await store.client.delete(*keys)
            await store.close()

    asyncio.run(main())


def test_the_last_access_is_a_maximum_and_the_count_a_counter(redis_url: str) -> None:
    async def body(store: RedisStore) -> None:
        access = RedisAccess(store)
        await access.record("s", ["a", "b", "a"], T0 + timedelta(days=2))
        await access.record("s", ["a"], T0)  # late, older: the maximum stays
        await access.touch("s", ["b"], T0 + timedelta(days=5))
        found = await access.read("s")
        assert found["a"].count == 2 and found["a"].last == T0 + timedelta(days=2)
        assert found["b"].count == 1 and found["b"].last == T0 + timedelta(days=5)
        assert await access.read("other") == {}
        await access.drop("s", ["a"])
        assert set(await access.read("s")) == {"b"}

    run(redis_url, body)


def test_the_hook_records_after_the_read_and_only_the_read_subject(redis_url: str) -> None:
    async def body(store: RedisStore) -> None:
        await store.apply(
            "s",
            "seed",
            expected_version=0,
            facts=[fact("s", "x"), fact("s", "y")],
            outputs=b"{}",
            now=T0,
        )
        hook = AccessHook(RedisAccess(store), clock=lambda: T0 + timedelta(days=1))
        reads = Reads(store, on_read=hook)
        found = await reads.facts("s", via="cli")
        assert [f.fact_id for f in found] == ["x", "y"]
        assert hook.pending == 2  # buffered, not written by the read
        await hook.drain()
        recorded = await RedisAccess(store).read("s")
        assert {f: a.count for f, a in recorded.items()} == {"x": 1, "y": 1}
        # A foreign fact handed to the hook is never recorded under the subject.
        await hook("s", [fact("t", "z")], "api")
        await hook("s", found, "inspector")  # operators looking do not count
        await hook.drain()
        assert {f: a.count for f, a in (await RedisAccess(store).read("s")).items()} == {
            "x": 1,
            "y": 1,
        }
        assert await RedisAccess(store).read("t") == {}

    run(redis_url, body)


def test_recording_does_not_slow_the_read(redis_url: str) -> None:
    async def body(store: RedisStore) -> None:
        facts = [fact("s", f"f{i}") for i in range(50)]
        await store.apply("s", "seed", expected_version=0, facts=facts, outputs=b"{}", now=T0)
        plain, hooked = Reads(store), Reads(store, on_read=AccessHook(RedisAccess(store)))
        for reads in (plain, hooked):  # warm the connections and the scripts
            await reads.facts("s")
        timings: dict[str, float] = {}
        for name, reads in (("plain", plain), ("hooked", hooked)):
            started = time.perf_counter()
            for _ in range(200):
                await reads.facts("s")
            timings[name] = time.perf_counter() - started
        # The hook's work runs beside the next reads; it must not double them.
        assert timings["hooked"] < 2.0 * timings["plain"] + 0.05, timings

    run(redis_url, body)
