"""RedisStore against the real Redis server (``redis_url``).

Every test works on fresh uuid subjects under its own key prefix and erases
them afterwards; nothing here flushes the shared database.
"""

from __future__ import annotations

import asyncio
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest
import redis
import redis.asyncio as aioredis

from slotwise.processors.model import ApplyStatus
from slotwise.sinks.exceptions import CorruptRecord, StoreUnavailable
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.records import Fact

pytestmark = pytest.mark.redis

T = TypeVar("T")
T0 = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


def run(
    url: str,
    prefix: str,
    scenario: Callable[[RedisStore], Awaitable[T]],
    **options: Any,
) -> T:
    async def main() -> T:
        store = RedisStore(aioredis.from_url(url), prefix=prefix, **options)
        try:
            return await scenario(store)
        finally:
            await store.close()

    return asyncio.run(main())


def subject() -> str:
    return f"user-{uuid.uuid4()}"


def fact(
    subject_id: str,
    fact_id: str,
    *,
    attribute: str | None = "employer",
    value: str = "Stripe",
    status: str = "current",
    valid_from: datetime = T0,
) -> Fact:
    return Fact.model_validate(
        {
            "fact_id": fact_id,
            "subject_id": subject_id,
            "attribute": attribute,
            "value": value,
            "text": f"User: {attribute} is {value}.",
            "category": "job",
            "status": status,
            "valid_from": valid_from,
            "observed_at": valid_from,
            "recorded_at": valid_from,
            "source": "chat",
            "confidence": 0.9,
            "importance": 0.7,
            "candidate_id": f"c-{fact_id}",
        },
        strict=False,
    )


def snapshot(url: str, prefix: str) -> dict[bytes, Any]:
    """Every key under the prefix with its full content."""
    client = redis.Redis.from_url(url)
    state: dict[bytes, Any] = {}
    for key in client.scan_iter(match=f"{prefix}:*", count=1000):
        kind = client.type(key)
        if kind == b"hash":
            state[key] = client.hgetall(key)
        elif kind == b"zset":
            state[key] = client.zrange(key, 0, -1, withscores=True)
        else:
            state[key] = (kind, client.dump(key))
    client.close()
    return state


def test_snapshot_reads_what_a_decision_needs_in_one_call(redis_url: str, prefix: str) -> None:
    sid = subject()
    datadog = fact(sid, "f1", value="Datadog")
    allergy = fact(sid, "f2", attribute="allergy", value="peanuts")
    other = subject()
    foreign = fact(other, "f9", value="Acme")

    async def scenario(store: RedisStore) -> None:
        empty = await store.snapshot(sid, "e1", own_fact_id="f1", attribute="employer")
        assert (empty.version, empty.stored, empty.own, empty.slot) == (0, None, None, ())
        await store.apply(
            sid, "e1", expected_version=0, facts=[datadog, allergy], outputs=b"blob-1", now=T0
        )
        await store.apply(other, "e9", expected_version=0, facts=[foreign], outputs=b"x", now=T0)

        replay = await store.snapshot(sid, "e1", own_fact_id="f1", attribute="employer")
        assert replay.stored == b"blob-1" and replay.version == 1
        assert replay.own is None and replay.slot == ()  # nothing else is read for a replay

        seen = await store.snapshot(sid, "e2", own_fact_id="f1", attribute="employer")
        assert seen.stored is None and seen.version == 1
        assert seen.own == datadog and seen.slot == (datadog,)
        assert (await store.snapshot(sid, "e2", own_fact_id="f7")).own is None
        assert (await store.snapshot_every_slot(sid)).slot in {
            (datadog, allergy),
            (allergy, datadog),
        }
        # As a FactReader it answers what it holds and asks the store for the rest.
        assert await seen.get_facts(sid, ["f1"]) == [datadog]
        assert await seen.current_in_slot(sid, "employer") == [datadog]
        assert await seen.current_in_slot(sid, "allergy") == [allergy]
        assert await seen.get_facts(sid, ["f2", "f1"]) == [allergy, datadog]
        assert await seen.get_facts(other, ["f1", "f9"]) == [foreign]

    run(redis_url, prefix, scenario)


def test_apply_writes_facts_slot_index_version_and_outputs(redis_url: str, prefix: str) -> None:
    sid = subject()
    datadog = fact(sid, "f1", value="Datadog")
    allergy = fact(sid, "f2", attribute="allergy", value="peanuts")

    async def scenario(store: RedisStore) -> None:
        assert await store.version(sid) == 0
        outcome = await store.apply(
            sid, "e1", expected_version=0, facts=[datadog, allergy], outputs=b"blob-1", now=T0
        )
        assert outcome.status is ApplyStatus.APPLIED and outcome.version == 1
        assert outcome.stored is None and not outcome.stale
        assert await store.version(sid) == 1
        assert await store.current_in_slot(sid, "employer") == [datadog]
        assert await store.current_in_slot(sid, "allergy") == [allergy]
        assert await store.current_in_slot(sid, "diet") == []
        assert await store.get_facts(sid, ["f2", "nope", "f1"]) == [allergy, datadog]
        assert await store.applied(sid, "e1") == b"blob-1"
        assert await store.applied(sid, "e2") is None

    run(redis_url, prefix, scenario)


def test_a_supersession_moves_the_slot_to_the_new_fact(redis_url: str, prefix: str) -> None:
    sid = subject()
    old = fact(sid, "f1", value="Datadog")
    new = fact(sid, "f2", value="Stripe", valid_from=T0 + timedelta(days=3))
    closed = old.model_copy(update={"status": "superseded", "superseded_by": "f2"})

    async def scenario(store: RedisStore) -> None:
        await store.apply(sid, "e1", expected_version=0, facts=[old], outputs=b"", now=T0)
        await store.apply(sid, "e2", expected_version=1, facts=[closed, new], outputs=b"", now=T0)
        assert await store.current_in_slot(sid, "employer") == [new]
        assert await store.get_facts(sid, ["f1"]) == [closed]
        assert await store.facts(sid) == [new]
        assert await store.facts(sid, include_history=True) == [closed, new]

    run(redis_url, prefix, scenario)


@pytest.mark.parametrize("expected_version", [1, 0, 7])
def test_replaying_an_event_returns_the_stored_outputs_and_changes_nothing(
    redis_url: str, prefix: str, expected_version: int
) -> None:
    sid = subject()

    async def first(store: RedisStore) -> None:
        await store.apply(
            sid,
            "e1",
            expected_version=0,
            facts=[fact(sid, "f1")],
            outputs=b"first",
            observation_id="o1",
            now=T0,
        )

    async def replay(store: RedisStore) -> Any:
        return await store.apply(
            sid,
            "e1",
            expected_version=expected_version,
            facts=[fact(sid, "f1", value="Other"), fact(sid, "f9")],
            outputs=b"second",
            observation_id="o2",
            now=T0 + timedelta(hours=1),
        )

    run(redis_url, prefix, first)
    before = snapshot(redis_url, prefix)
    outcome = run(redis_url, prefix, replay)
    assert outcome.status is ApplyStatus.ALREADY_APPLIED and outcome.already_applied
    assert outcome.stored == b"first" and outcome.version == 1
    assert snapshot(redis_url, prefix) == before


def test_a_stale_expected_version_is_refused_and_writes_nothing(
    redis_url: str, prefix: str
) -> None:
    sid = subject()

    async def scenario(store: RedisStore) -> None:
        await store.apply(
            sid, "e1", expected_version=0, facts=[fact(sid, "f1")], outputs=b"", now=T0
        )
        before = snapshot(redis_url, prefix)
        # A zombie worker computed against version 0 and writes after its successor.
        outcome = await store.apply(
            sid,
            "e2",
            expected_version=0,
            facts=[fact(sid, "f2", value="Zombie")],
            outputs=b"zombie",
            observation_id="o2",
            now=T0,
        )
        assert outcome.stale and outcome.version == 1 and outcome.stored is None
        assert snapshot(redis_url, prefix) == before
        assert await store.applied(sid, "e2") is None
        assert not await store.observation_applied(sid, "o2")

    run(redis_url, prefix, scenario)


def test_the_watermark_is_the_last_applied_observation(redis_url: str, prefix: str) -> None:
    sid = subject()

    async def scenario(store: RedisStore) -> None:
        assert await store.watermark(sid) is None
        await store.apply(sid, "e1", expected_version=0, facts=[], outputs=b"", now=T0)
        assert await store.watermark(sid) is None
        for version, obs in enumerate(["o1", "o2"]):
            await store.apply(
                sid,
                f"m-{obs}",
                expected_version=version + 1,
                facts=[],
                outputs=b"",
                observation_id=obs,
                now=T0,
            )
        assert await store.watermark(sid) == "o2"
        assert await store.observation_applied(sid, "o1")
        assert await store.observation_applied(sid, "o2")
        assert not await store.observation_applied(sid, "o3")
        assert await store.watermark(subject()) is None

    run(redis_url, prefix, scenario)


def test_wait_returns_as_soon_as_the_observation_is_applied(redis_url: str, prefix: str) -> None:
    sid = subject()

    async def scenario(store: RedisStore) -> tuple[bool, float]:
        async def later() -> None:
            await asyncio.sleep(0.2)
            await store.apply(
                sid, "m1", expected_version=0, facts=[], outputs=b"", observation_id="o1", now=T0
            )

        writer = asyncio.create_task(later())
        started = time.perf_counter()
        applied = await store.wait_for_observation(sid, "o1", timeout_s=10)
        elapsed = time.perf_counter() - started
        await writer
        return applied, elapsed

    # A recheck interval far above the wait shows the wake-up comes from the channel.
    applied, elapsed = run(redis_url, prefix, scenario, wait_recheck_s=30.0)
    assert applied
    assert 0.2 <= elapsed < 1.5


def test_wait_for_an_applied_observation_returns_at_once(redis_url: str, prefix: str) -> None:
    sid = subject()

    async def scenario(store: RedisStore) -> tuple[bool, float]:
        await store.apply(
            sid, "m1", expected_version=0, facts=[], outputs=b"", observation_id="o1", now=T0
        )
        started = time.perf_counter()
        applied = await store.wait_for_observation(sid, "o1", timeout_s=10)
        return applied, time.perf_counter() - started

    applied, elapsed = run(redis_url, prefix, scenario)
    assert applied and elapsed < 0.5


def test_wait_times_out_for_an_observation_never_applied(redis_url: str, prefix: str) -> None:
    sid = subject()

    async def scenario(store: RedisStore) -> tuple[bool, float]:
        # Another observation of the subject wakes the waiter, which keeps waiting.
        async def other() -> None:
            await asyncio.sleep(0.1)
            await store.apply(
                sid, "m2", expected_version=0, facts=[], outputs=b"", observation_id="o2", now=T0
            )

        writer = asyncio.create_task(other())
        started = time.perf_counter()
        applied = await store.wait_for_observation(sid, "o1", timeout_s=0.4)
        elapsed = time.perf_counter() - started
        await writer
        return applied, elapsed

    applied, elapsed = run(redis_url, prefix, scenario, wait_recheck_s=0.1)
    assert not applied
    assert 0.4 <= elapsed < 1.5


def test_applied_events_and_observation_marks_expire_after_the_retention(
    redis_url: str, prefix: str
) -> None:
    sid = subject()

    async def scenario(store: RedisStore) -> None:
        for version in range(5):
            await store.apply(
                sid,
                f"old-{version}",
                expected_version=version,
                facts=[],
                outputs=b"x",
                observation_id=f"o-{version}",
                now=T0,
            )
        later = T0 + timedelta(hours=2)
        await store.apply(
            sid,
            "new-1",
            expected_version=5,
            facts=[],
            outputs=b"y",
            observation_id="o-new",
            now=later,
        )
        # At most prune_batch expired events go per apply, so the hot path stays cheap.
        left = [e for e in range(5) if await store.applied(sid, f"old-{e}") is not None]
        assert len(left) == 3
        await store.apply(sid, "new-2", expected_version=6, facts=[], outputs=b"z", now=later)
        await store.apply(sid, "new-3", expected_version=7, facts=[], outputs=b"z", now=later)
        assert all([await store.applied(sid, f"old-{e}") is None for e in range(5)])
        assert await store.applied(sid, "new-1") == b"y"
        assert not await store.observation_applied(sid, "o-0")
        assert await store.observation_applied(sid, "o-new")
        assert (await store.residue(sid))["applied"] == 3

    run(redis_url, prefix, scenario, retention=timedelta(hours=1), prune_batch=2)


def test_facts_lists_current_or_all_sorted_with_unslotted_facts(
    redis_url: str, prefix: str
) -> None:
    sid = subject()
    later = T0 + timedelta(days=1)
    hobby = fact(sid, "f3", attribute=None, value="climbing")
    diet = fact(sid, "f2", attribute="diet", value="vegetarian")
    old_job = fact(sid, "f1", value="Datadog", status="superseded")
    job = fact(sid, "f4", value="Stripe", valid_from=later)
    note = fact(sid, "f5", attribute=None, value="old note", status="archived")

    async def scenario(store: RedisStore) -> None:
        await store.apply(
            sid,
            "e1",
            expected_version=0,
            facts=[hobby, job, note, diet, old_job],
            outputs=b"",
            now=T0,
        )
        assert await store.facts(sid) == [diet, job, hobby]
        assert await store.facts(sid, include_history=True) == [diet, old_job, job, hobby, note]
        assert await store.facts(subject()) == []

    run(redis_url, prefix, scenario)


def test_a_fact_that_changes_attribute_leaves_its_old_slot(redis_url: str, prefix: str) -> None:
    sid = subject()
    unslotted = fact(sid, "f1", attribute=None, value="Lisbon")
    placed = unslotted.model_copy(update={"attribute": "home_city"})

    async def scenario(store: RedisStore) -> None:
        await store.apply(sid, "e1", expected_version=0, facts=[unslotted], outputs=b"", now=T0)
        await store.apply(sid, "e2", expected_version=1, facts=[placed], outputs=b"", now=T0)
        assert await store.current_in_slot(sid, "home_city") == [placed]
        assert await store.facts(sid) == [placed]
        assert (await store.residue(sid))["slots"] == 1

    run(redis_url, prefix, scenario)


@pytest.mark.parametrize(
    ("doomed", "neighbour"),
    [
        ("user-{u}", "user-{u}-2"),
        # Unescaped, the pattern of "{u}*" would match the keys of "{u}ab".
        ("{u}*", "{u}ab"),
        # Unencoded, "{u}" would share a hash tag and a key prefix with "{u}}:x".
        ("{u}", "{u}}:x"),
        ('us"er\\{u}', "us?er\\{u}"),
    ],
)
def test_erase_removes_every_key_of_the_subject_and_nothing_else(
    redis_url: str, prefix: str, doomed: str, neighbour: str
) -> None:
    u = uuid.uuid4().hex
    doomed, neighbour = doomed.replace("{u}", u), neighbour.replace("{u}", u)

    async def fill(store: RedisStore, sid: str) -> None:
        await store.apply(
            sid,
            "e1",
            expected_version=0,
            facts=[fact(sid, "f1"), fact(sid, "f2", attribute=None)],
            outputs=b"x",
            observation_id="o1",
            now=T0,
        )
        await store.apply(
            sid,
            "e2",
            expected_version=1,
            facts=[fact(sid, "f1", status="superseded"), fact(sid, "f3", value="Acme")],
            outputs=b"y",
            now=T0,
        )

    async def scenario(store: RedisStore) -> tuple[dict[str, int], ...]:
        await fill(store, doomed)
        await fill(store, neighbour)
        kept_before = await store.residue(neighbour)
        deleted = await store.erase_subject(doomed)
        return deleted, await store.residue(doomed), kept_before, await store.residue(neighbour)

    deleted, residue, kept_before, kept_after = run(redis_url, prefix, scenario)
    assert deleted == {
        "facts": 3,
        "slots": 2,
        "current": 2,
        "meta": 3,
        "applied": 2,
        "applied_at": 2,
        "observations": 1,
    }
    assert residue == {}
    assert kept_after == kept_before == deleted


def test_erasing_an_unknown_subject_deletes_nothing(redis_url: str, prefix: str) -> None:
    async def scenario(store: RedisStore) -> dict[str, int]:
        return await store.erase_subject(subject())

    assert run(redis_url, prefix, scenario) == {}


def test_a_stored_fact_that_no_longer_decodes_is_reported(redis_url: str, prefix: str) -> None:
    sid = subject()

    async def scenario(store: RedisStore) -> None:
        await store.apply(
            sid, "e1", expected_version=0, facts=[fact(sid, "f1")], outputs=b"", now=T0
        )
        [key] = [k for k in snapshot(redis_url, prefix) if k.endswith(b":facts")]
        client = redis.Redis.from_url(redis_url)
        client.hset(key, "f1", b'{"schema":"fact/1","fact_id":"f1"}')
        client.close()
        with pytest.raises(CorruptRecord) as caught:
            await store.current_in_slot(sid, "employer")
        assert caught.value.key == key.decode()

    run(redis_url, prefix, scenario)


def test_an_unreachable_redis_raises_store_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def scenario() -> None:
        store = RedisStore.from_url(f"redis://127.0.0.1:{port}/0", timeout_s=1.0)
        try:
            with pytest.raises(StoreUnavailable):
                await store.ping()
            with pytest.raises(StoreUnavailable):
                await store.version("user-1")
        finally:
            await store.close()

    asyncio.run(scenario())


def test_apply_refuses_facts_about_another_subject(redis_url: str, prefix: str) -> None:
    sid = subject()

    async def scenario() -> None:
        store = RedisStore.from_url(redis_url, prefix=prefix)
        assert await store.ping()
        with pytest.raises(ValueError, match="not about subject"):
            await store.apply(
                sid,
                "e1",
                expected_version=0,
                facts=[fact(subject(), "f1")],
                outputs=b"",
                now=T0,
            )
        assert await store.version(sid) == 0
        await store.close()

    asyncio.run(scenario())


def test_more_callers_than_connections_wait_their_turn(redis_url: str, prefix: str) -> None:
    async def main() -> list[int]:
        store = RedisStore.from_url(redis_url, prefix=prefix, max_connections=4)
        try:
            seen = await asyncio.gather(*(store.snapshot(f"user-{i}") for i in range(300)))
            return [s.version for s in seen]
        finally:
            await store.close()

    # redis-py's default pool raised "Too many connections" past its limit instead.
    assert asyncio.run(main()) == [0] * 300
