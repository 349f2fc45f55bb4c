"""The forget and restore handlers against the real Redis and Milvus (no Kafka): the tiers.

Archive → gone from default reads and from the hot vectors → found with
``include_archived`` and by a cold-tier search → restored; the vector is in one
tier after every step, a replay re-emits the stored outputs byte for byte, and
a crash between the Redis write and the vector move converges on the replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from pymilvus import MilvusClient

from slotwise.processors.forgetting import ForgetPolicy, HalfLives
from slotwise.processors.model import VectorRow
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.milvus.tiers import MilvusTiers, archived_subject
from slotwise.sinks.redis.access import RedisAccess
from slotwise.sinks.redis.cold import RedisColdIndex, subjects
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.commands.forget import Forgetting
from slotwise.streams.config import Settings
from slotwise.streams.passes.forget import forget_commands, run_schedule
from slotwise.streams.read.reads import FactQuery, Reads
from slotwise.topics.records import Command, Fact

pytestmark = [pytest.mark.redis, pytest.mark.milvus]

T0 = datetime(2026, 1, 1, tzinfo=UTC)
LATER = T0 + timedelta(days=200)
SCHEMA = AttributeSchema.load()


class HashEmbedder:
    """Bag of hashed words, unit length: equal texts embed equally."""

    model_name = "test-hash-v1"
    dimension = 32

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = []
        for text in texts:
            row = [0.0] * self.dimension
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.sha256(word.encode()).digest()
                row[int.from_bytes(digest[:4], "big") % self.dimension] += 1.0
            norm = math.sqrt(sum(v * v for v in row)) or 1.0
            rows.append([v / norm for v in row])
        return rows


def fact(fact_id: str, attribute: str | None, text: str, **fields: object) -> Fact:
    base: dict[str, object] = {
        "schema": "fact/1",
        "fact_id": fact_id,
        "subject_id": "ana",
        "attribute": attribute,
        "value": None,
        "text": text,
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
    return Fact.model_validate({**base, **fields})


@dataclass
class Rig:
    store: RedisStore
    index: MilvusIndex
    tiers: MilvusTiers
    forgetting: Forgetting
    prefix: str


@contextlib.asynccontextmanager
async def opened(redis_url: str, milvus_uri: str) -> AsyncIterator[Rig]:
    prefix = f"t{uuid.uuid4().hex[:10]}"
    store = RedisStore.from_url(redis_url, prefix=prefix)
    embedder = HashEmbedder()
    index = MilvusIndex(milvus_uri, embedder, alias=f"{prefix}_current", prefix=prefix)
    await index.setup()
    tiers = MilvusTiers(index, embedder, uri=milvus_uri)
    forgetting = Forgetting(
        store,
        tiers,
        schema=SCHEMA,
        policy=ForgetPolicy(threshold=0.1),
        half_lives=HalfLives.of(SCHEMA),
        now=lambda: LATER,
    )
    try:
        yield Rig(store, index, tiers, forgetting, prefix)
    finally:
        await tiers.close()
        await index.close()
        client = store.client
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*")]
        if keys:
            await client.delete(*keys)
        await store.close()
        milvus = MilvusClient(uri=milvus_uri)
        if f"{prefix}_current" in milvus.list_aliases().get("aliases", []):
            milvus.drop_alias(f"{prefix}_current")
        for name in milvus.list_collections():
            if name.startswith(f"{prefix}_"):
                milvus.drop_collection(name)
        milvus.close()


def run(redis_url: str, milvus_uri: str, body: Callable[[Rig], Awaitable[None]]) -> None:
    async def main() -> None:
        async with opened(redis_url, milvus_uri) as rig:
            await body(rig)

    asyncio.run(main())


async def seed(rig: Rig, facts: Sequence[Fact]) -> None:
    outcome = await rig.store.apply(
        "ana", "seed", expected_version=0, facts=facts, outputs=b"{}", now=T0
    )
    assert not outcome.stale
    rig.index.add(VectorRow(f.fact_id, f.subject_id, f.text, f.category) for f in facts)
    await rig.index.flush()


def forget_at(as_of: datetime) -> Command:
    return forget_commands(["ana"], as_of=as_of, policy=ForgetPolicy(threshold=0.1))[0]


def restore_of(fact_id: str) -> Command:
    return Command(
        command_id=str(uuid.uuid4()),
        subject_id="ana",
        command="restore",
        issued_at=LATER,
        as_of=LATER,
        fact_id=fact_id,
    )


FACTS = [
    fact("name", "name", "User's name is Ana."),
    fact("trip", "current_location", "User is in Kyoto this week."),
    fact("job", "employer", "User works at Stripe.", supersedes="was"),
    fact(
        "was",
        "employer",
        "User works at Datadog.",
        status="superseded",
        valid_to=T0,
        superseded_by="job",
    ),
]


def test_archive_read_search_restore_with_one_tier_throughout(
    redis_url: str, milvus_uri: str
) -> None:
    run(redis_url, milvus_uri, _test_archive_read_search_restore_with_one_tier_throughout)


async def _test_archive_read_search_restore_with_one_tier_throughout(rig: Rig) -> None:
    await seed(rig, FACTS)

    async def index() -> MilvusIndex:
        return rig.index

    reads = Reads(rig.store, vectors=index)
    assert await rig.tiers.locate(["trip", "job"]) == {"trip": {"hot"}, "job": {"hot"}}

    command = forget_at(LATER)
    messages = await rig.forgetting.forget(command)
    assert len(messages) == 1  # the event fact decayed; name never decays, job barely
    assert {f.fact_id: f.status for f in await rig.store.get_facts("ana", ["trip"])} == {
        "trip": "archived"
    }
    assert await rig.tiers.locate(["trip", "job", "was"]) == {
        "trip": {"cold"},
        "job": {"hot"},
        "was": {"cold"},  # retired: moved, status and links unchanged
    }
    assert (await rig.store.get_facts("ana", ["was"]))[0] == FACTS[3]
    assert [f.fact_id for f in await reads.facts("ana")] == ["job", "name"]
    found = await reads.search("ana", "User works at Datadog.", query=FactQuery(history=True))
    assert "was" in [hit.fact.fact_id for hit in found]
    everything = await reads.facts("ana", FactQuery(include_archived=True))
    assert {f.fact_id for f in everything} == {"job", "name", "trip"}
    hot = await rig.index.nearest("ana", "User is in Kyoto this week.", k=5, floor=0.5)
    assert "trip" not in dict(hot)
    cold = await rig.index.nearest(
        "ana", "User is in Kyoto this week.", k=5, floor=0.5, tier="cold"
    )
    assert [fact_id for fact_id, _ in cold] == ["trip"]
    assert await archived_subject_of(rig, "trip") == "ana"
    assert [
        f.fact_id
        for f in await RedisColdIndex(rig.store).archived_in_slot("ana", "current_location")
    ] == ["trip"]

    # A replay re-emits the stored decision, whatever was read since.
    await RedisAccess(rig.store).record("ana", ["name", "job"], LATER)
    assert await rig.forgetting.forget(command) == messages
    assert await rig.tiers.locate(["trip"]) == {"trip": {"cold"}}

    restore = restore_of("trip")
    back = await rig.forgetting.restore(restore)
    assert len(back) == 1
    assert [f.status for f in await rig.store.get_facts("ana", ["trip"])] == ["current"]
    assert await rig.tiers.locate(["trip"]) == {"trip": {"hot"}}
    assert await rig.forgetting.restore(restore) == back
    assert (await RedisAccess(rig.store).read("ana"))["trip"].last == LATER
    assert await RedisColdIndex(rig.store).archived_count("ana") == 0
    # Restored means touched at the restore: the same pass again keeps it.
    assert await rig.forgetting.forget(forget_at(LATER)) == ()


async def archived_subject_of(rig: Rig, fact_id: str) -> str | None:
    client = MilvusClient(uri=rig.index._uri)
    try:
        return await asyncio.to_thread(archived_subject, client, rig.prefix, fact_id)
    finally:
        client.close()


def test_a_crash_between_redis_and_the_move_converges_on_the_replay(
    redis_url: str, milvus_uri: str
) -> None:
    run(redis_url, milvus_uri, _test_a_crash_between_redis_and_the_move_converges_on_the_replay)


async def _test_a_crash_between_redis_and_the_move_converges_on_the_replay(rig: Rig) -> None:
    await seed(rig, FACTS)
    command = forget_at(LATER)
    # The first application stores its decision and dies before moving anything.
    real_settle = rig.tiers.settle

    async def killed(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("killed")

    rig.tiers.settle = killed  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await rig.forgetting.forget(command)
    rig.tiers.settle = real_settle  # type: ignore[method-assign]
    # Archived in Redis, still hot in Milvus: every read filters by the Redis status.
    assert await rig.tiers.locate(["trip"]) == {"trip": {"hot"}}
    assert [f.fact_id for f in await Reads(rig.store).facts("ana")] == ["job", "name"]
    replayed = await rig.forgetting.forget(command)
    assert len(replayed) == 1
    assert await rig.tiers.locate(["trip", "job", "name"]) == {
        "trip": {"cold"},
        "job": {"hot"},
        "name": {"hot"},
    }


def test_a_row_in_both_tiers_is_settled_to_one(redis_url: str, milvus_uri: str) -> None:
    run(redis_url, milvus_uri, _test_a_row_in_both_tiers_is_settled_to_one)


async def _test_a_row_in_both_tiers_is_settled_to_one(rig: Rig) -> None:
    await seed(rig, FACTS)
    trip = FACTS[1].model_copy(update={"status": "archived"})
    # Copy without the delete: what a crash mid-move leaves.
    client = MilvusClient(uri=rig.index._uri)
    try:
        await rig.tiers.settle("ana", [trip])
        rows = client.get(rig.tiers.cold_collection, ids=["trip"], output_fields=["*"])
        client.upsert(rig.index.collection or "", [dict(r) for r in rows])
    finally:
        client.close()
    assert await rig.tiers.locate(["trip"]) == {"trip": {"hot", "cold"}}
    await rig.tiers.settle("ana", [trip])
    assert await rig.tiers.locate(["trip"]) == {"trip": {"cold"}}


def test_restore_refuses_a_fact_whose_slot_is_taken(redis_url: str, milvus_uri: str) -> None:
    run(redis_url, milvus_uri, _test_restore_refuses_a_fact_whose_slot_is_taken)


async def _test_restore_refuses_a_fact_whose_slot_is_taken(rig: Rig) -> None:
    await seed(rig, FACTS)
    await rig.forgetting.forget(forget_at(LATER))
    newer = fact("trip2", "current_location", "User is in Osaka.", recorded_at=LATER)
    outcome = await rig.store.apply(
        "ana",
        "newer",
        expected_version=await rig.store.version("ana"),
        facts=[newer],
        outputs=b"{}",
        now=LATER,
    )
    assert not outcome.stale
    assert await rig.forgetting.restore(restore_of("trip")) == ()
    assert [f.status for f in await rig.store.get_facts("ana", ["trip"])] == ["archived"]
    assert await rig.forgetting.restore(restore_of("nonexistent")) == ()


def test_subjects_lists_every_subject_once(redis_url: str, milvus_uri: str) -> None:
    run(redis_url, milvus_uri, _test_subjects_lists_every_subject_once)


async def _test_subjects_lists_every_subject_once(rig: Rig) -> None:
    await seed(rig, FACTS)
    odd = "we}ird*sub[ject"
    await rig.store.apply(odd, "e", expected_version=0, facts=[], outputs=b"{}", now=T0)
    assert sorted([s async for s in subjects(rig.store)]) == sorted(["ana", odd])


def test_the_scheduled_pass_is_bounded_and_stops(redis_url: str, milvus_uri: str) -> None:
    async def body(rig: Rig) -> None:
        settings = Settings(redis_prefix=rig.prefix)
        rounds: list[int] = []
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.7, stop.set)
        started = time.monotonic()
        done = await run_schedule(
            settings,
            rig.store,
            every_s=0.2,
            policy=ForgetPolicy(),
            stop=stop,
            on_round=lambda report: rounds.append(report.commands),
        )
        assert 2 <= done <= 5 and rounds == [0] * done  # no subject: nothing published
        assert time.monotonic() - started < 2.0
        assert (
            await run_schedule(
                settings,
                rig.store,
                every_s=0.01,
                policy=ForgetPolicy(),
                stop=asyncio.Event(),
                rounds=3,
            )
            == 3
        )

    run(redis_url, milvus_uri, body)
