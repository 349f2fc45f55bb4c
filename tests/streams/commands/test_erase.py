"""The erase handler in process, against the real Redis and Milvus Lite.

The write path and the handler are driven directly (no Kafka), so a crash can be
placed exactly: between any two of the erasure's steps, and at the replay trap,
where events applied before the erase replay after it (their offsets were not
committed when the worker died).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest
import redis
import redis.asyncio as aioredis
from pymilvus import MilvusClient

from slotwise.models.embedders import CachedEmbedder
from slotwise.processors.cascade import Cascade
from slotwise.processors.extract import RulesExtractor
from slotwise.processors.model import VectorRow
from slotwise.processors.resolve import fact_id_for
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import OfflineSlotMatcher
from slotwise.sinks.kafka.retention import Retention, TopicRetention
from slotwise.sinks.milvus.collections import GRPC_OPTIONS
from slotwise.sinks.milvus.erasure import MilvusErasure
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.redis.erasure import RedisErasure
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.commands.erase import Erasure
from slotwise.streams.write.path import WritePath
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import decode_record
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import CandidateFact, Command, ErasureAttestation, Fact

pytestmark = [pytest.mark.redis, pytest.mark.milvus]

T = TypeVar("T")
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
CATALOGUE = Catalogue(prefix="tx", partitions=3)


class HashEmbedder:
    """Bag of hashed words, unit length: equal texts embed equally."""

    model_name = "test-hash-v1"
    dimension = 32

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = []
        for text in texts:
            row = [0.0] * self.dimension
            for word in re.findall(r"\w+", text.lower()):
                row[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4]) % 32] += 1.0
            norm = math.sqrt(sum(v * v for v in row)) or 1.0
            rows.append([v / norm for v in row])
        return rows


def retention() -> Retention:
    week = 7 * 24 * 3600 * 1000
    return Retention(
        {
            str(getattr(CATALOGUE, kind)): TopicRetention(
                str(getattr(CATALOGUE, kind)),
                "compact" if kind == "facts" else "delete",
                week,
                week,
                24 * 3600 * 1000 if kind == "facts" else None,
            )
            for kind in ("observations", "candidates", "supersessions", "facts", "review")
        }
    )


@dataclass
class World:
    store: RedisStore
    index: MilvusIndex
    vectors: MilvusErasure
    cache: CachedEmbedder
    path: WritePath
    erase: Erasure


@asynccontextmanager
async def world(redis_url: str, milvus_uri: str, prefix: str) -> AsyncIterator[World]:
    async with AsyncExitStack() as stack:
        store = RedisStore(aioredis.from_url(redis_url), prefix=prefix)
        stack.push_async_callback(store.close)
        cache = CachedEmbedder(HashEmbedder())
        index = MilvusIndex(milvus_uri, cache, alias=f"{prefix}_current", prefix=prefix)
        stack.push_async_callback(index.close)
        await index.setup()
        vectors = MilvusErasure(milvus_uri, cache, prefix=prefix)
        stack.push_async_callback(vectors.close)
        schema = AttributeSchema.load()
        cascade = Cascade(
            schema, store, index, OfflineSlotMatcher(), now=lambda: T0, embedding_model="hash"
        )
        erase = Erasure(
            store,
            vectors,
            index,
            catalogue=CATALOGUE,
            retention=retention,
            cache=cache,
            reviews=RedisReviews(store, prefix=prefix),
            now=lambda: T0,
            wall=lambda: datetime.now(UTC),
            backoff_s=0.05,
        )
        path = WritePath(RulesExtractor(schema), cascade, store, index, lambda: T0)
        yield World(store, index, vectors, cache, path, erase)


@pytest.fixture
def prefix(redis_url: str, milvus_uri: str) -> Any:
    name = f"te{uuid.uuid4().hex[:8]}"
    yield name
    client = redis.Redis.from_url(redis_url)
    doomed = list(client.scan_iter(match=f"{name}:*", count=1000))
    if doomed:
        client.delete(*doomed)
    client.close()
    milvus = MilvusClient(uri=milvus_uri, grpc_options=GRPC_OPTIONS)
    for alias in milvus.list_aliases().get("aliases", []):
        if alias.startswith(f"{name}_"):
            milvus.drop_alias(alias)
    for collection in milvus.list_collections():
        if collection.startswith(f"{name}_"):
            milvus.drop_collection(collection)
    milvus.close()


def run(
    redis_url: str, milvus_uri: str, prefix: str, scenario: Callable[[World], Awaitable[T]]
) -> T:
    async def main() -> T:
        async with world(redis_url, milvus_uri, prefix) as w:
            return await scenario(w)

    return asyncio.run(main())


def candidate(subject: str, attribute: str, value: str, day: int) -> CandidateFact:
    return CandidateFact(
        candidate_id=str(uuid.uuid4()),
        subject_id=subject,
        attribute=attribute,
        value=value,
        text=f"User's {attribute} is {value}.",
        observed_at=T0 + timedelta(days=day),
        confidence=0.9,
    )


def erase(subject: str, **scope: str) -> Command:
    return Command(
        command_id=str(uuid.uuid4()),
        subject_id=subject,
        command="erase",
        issued_at=T0,
        reason="test",
        **scope,  # type: ignore[arg-type]
    )


def attested(messages: Sequence[Outbound]) -> ErasureAttestation:
    (record,) = [decode_record(m.value) for m in messages if m.topic == "erasures"]
    assert isinstance(record, ErasureAttestation)
    return record


def tombstones(messages: Sequence[Outbound]) -> set[str]:
    return {(m.key or b"").decode() for m in messages if m.topic == "facts" and m.value is None}


def indexed(att: ErasureAttestation) -> int:
    """Rows the attestation says were deleted from Milvus collections (the buffer aside)."""
    return sum(
        v for k, v in att.deleted.items() if k.startswith("milvus:") and k != "milvus:buffer"
    )


async def write(w: World, candidates: Sequence[CandidateFact]) -> None:
    for c in candidates:
        await w.path.on_candidate(c)
    await w.index.flush()


async def milvus_rows(w: World, subject: str) -> int:
    return sum((await w.vectors.count(subject, None)).values()) + w.index.buffered(subject)


def test_a_subject_erase_deletes_everywhere_and_a_replay_of_earlier_events_writes_nothing(
    redis_url: str, milvus_uri: str, prefix: str
) -> None:
    doomed, other = f"u-{uuid.uuid4().hex[:6]}", f"o-{uuid.uuid4().hex[:6]}"
    before = [
        candidate(doomed, "employer", "Datadog", 1),
        candidate(doomed, "employer", "Stripe", 5),
        candidate(doomed, "home_city", "Lisbon", 2),
    ]
    kept = [candidate(other, "employer", "Stripe", 5)]
    late = candidate(doomed, "employer", "Acme", 9)

    async def scenario(w: World) -> None:
        await write(w, [*before, *kept])
        # A replayed event's vector rows are buffered again before the erase runs.
        assert await w.path.on_candidate(before[0])
        w.index.add(
            [VectorRow(fact_id_for(before[2]), doomed, "User's home_city is Lisbon.", None)]
        )
        assert w.index.buffered(doomed) == 2
        command = erase(doomed)
        out = await w.erase(command)
        att = attested(out)
        assert att.verified, att.remaining
        assert att.deleted["redis:facts"] == 3 and att.deleted["redis:slot_index"] == 2
        assert indexed(att) == 3 and att.deleted["milvus:buffer"] == 2
        assert tombstones(out) == {fact_id_for(c) for c in before}
        assert {c.method for c in att.checks} == {"by_fact_id", "by_subject", "by_text"}
        assert await w.store.facts(doomed, include_history=True) == []
        assert await milvus_rows(w, doomed) == 0
        assert w.cache.holding(["User's employer is Datadog."]) == 0

        # The replay trap: the earlier events replay after the erase (uncommitted offsets).
        for c in before:
            assert await w.path.on_candidate(c) == ()
        assert w.index.buffered(doomed) == 0
        assert await w.store.facts(doomed, include_history=True) == []
        # The erase's own replay re-emits the same messages, byte for byte.
        assert await w.erase(command) == out
        # Written again after the erase: the subject exists again, with only the new fact.
        await write(w, [late])
        assert [f.value for f in await w.store.facts(doomed, include_history=True)] == ["Acme"]
        # The other subject is untouched.
        assert [f.value for f in await w.store.facts(other)] == ["Stripe"]
        assert await milvus_rows(w, other) == 1

    run(redis_url, milvus_uri, prefix, scenario)


def test_erasing_the_middle_of_a_chain_relinks_it_and_a_scoped_erase_keeps_the_rest(
    redis_url: str, milvus_uri: str, prefix: str
) -> None:
    subject = f"u-{uuid.uuid4().hex[:6]}"
    a, b, c = (candidate(subject, "employer", v, d) for v, d in (("A", 1), ("B", 2), ("C", 3)))
    home = candidate(subject, "home_city", "Porto", 1)

    async def scenario(w: World) -> None:
        await write(w, [a, b, c, home])
        out = await w.erase(erase(subject, fact_id=fact_id_for(b)))
        assert attested(out).verified
        assert tombstones(out) == {fact_id_for(b)}
        facts = {f.value: f for f in await w.store.facts(subject, include_history=True)}
        assert set(facts) == {"A", "C", "Porto"}
        assert facts["A"].superseded_by == facts["C"].fact_id
        assert facts["C"].supersedes == facts["A"].fact_id
        assert facts["C"].status == "current" and facts["A"].status == "superseded"
        relinked = [decode_record(m.value) for m in out if m.topic == "facts" and m.value]
        assert {f.value for f in relinked if isinstance(f, Fact)} == {"A", "C"}
        assert sum((await w.vectors.count(subject, [fact_id_for(b)])).values()) == 0

        out = await w.erase(erase(subject, attribute="home_city"))
        assert attested(out).verified and tombstones(out) == {fact_id_for(home)}
        assert {f.value for f in await w.store.facts(subject, include_history=True)} == {"A", "C"}
        assert await milvus_rows(w, subject) == 2
        # Erasing the current fact leaves its predecessor closed, with no successor.
        await w.erase(erase(subject, fact_id=fact_id_for(c)))
        (left,) = await w.store.facts(subject, include_history=True)
        assert (left.value, left.status, left.superseded_by) == ("A", "superseded", None)

    run(redis_url, milvus_uri, prefix, scenario)


class Crash(Exception):
    pass


@pytest.mark.parametrize("step", ["count", "delete_vectors", "redis_delete", "finish"])
def test_a_crash_between_any_two_steps_finishes_the_same_erasure_once(
    redis_url: str, milvus_uri: str, prefix: str, step: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    subject = f"u-{uuid.uuid4().hex[:6]}"
    writes = [candidate(subject, "employer", f"E{i}", i) for i in range(5)]
    targets = {
        "count": (MilvusErasure, "delete"),  # after begin, before any delete
        "delete_vectors": (RedisErasure, "delete"),  # vectors gone, Redis untouched
        "redis_delete": (RedisErasure, "contents"),  # Redis deleted, nothing looked at
        "finish": (RedisErasure, "finish"),  # looked, not attested
    }
    cls, name = targets[step]
    original = getattr(cls, name)
    crashed: list[bool] = []

    async def once(self: object, *args: object, **kwargs: object) -> object:
        if not crashed:
            crashed.append(True)
            raise Crash(step)
        return await original(self, *args, **kwargs)

    async def scenario(w: World) -> tuple[ErasureAttestation, ErasureAttestation]:
        await write(w, writes)
        command = erase(subject)
        monkeypatch.setattr(cls, name, once)
        with pytest.raises(Crash):
            await w.erase(command)
        # A restarted worker: a new process, its caches and buffers empty.
        async with world(redis_url, milvus_uri, prefix) as fresh:
            for c in writes:  # the replay from the last committed offset
                await fresh.path.on_candidate(c)
            first = attested(await fresh.erase(command))
            again = attested(await fresh.erase(command))
            assert await fresh.store.facts(subject, include_history=True) == []
            assert await milvus_rows(fresh, subject) == 0
        return first, again

    first, again = run(redis_url, milvus_uri, prefix, scenario)
    assert crashed and first == again and first.verified, first.remaining
    assert first.deleted["redis:facts"] == 5
    assert indexed(first) == 5


def test_the_keys_other_features_keep_are_cleared_of_the_scope(
    redis_url: str, milvus_uri: str, prefix: str
) -> None:
    subject = f"u-{uuid.uuid4().hex[:6]}"
    doomed, kept = candidate(subject, "email", "a@x.org", 1), candidate(subject, "diet", "vegan", 1)
    gone, stays = fact_id_for(doomed), fact_id_for(kept)

    async def scenario(w: World) -> None:
        await write(w, [doomed, kept])
        client, key = w.store.client, w.store.key
        # As the access hook, the cold and provenance indexes and the review store keep them.
        await client.zadd(key(subject, "access_at"), {gone: 1, stays: 1})
        await client.hset(key(subject, "access_n"), mapping={gone: 3, stays: 1})
        await client.zadd(key(subject, "dependents"), {f"{gone}\0{stays}": 0, f"{stays}\0x": 0})
        await client.sadd(key(subject, "rejected"), f"value\0email\0{gone}\0b@x.org")
        item = f'{{"incumbent_fact_ids": ["{gone}"], "text": "User\'s email is b@x.org."}}'
        await client.hset(key(subject, "review"), mapping={"r1": item, "r2": "{}"})
        await client.zadd(key(subject, "review_open"), {"r1": 1, "r2": 2})
        await client.hset(f"{prefix}:review_index", mapping={"r1": subject, "r2": subject})

        out = await w.erase(erase(subject, fact_id=gone))
        att = attested(out)
        assert att.verified, att.remaining
        assert await client.zrange(key(subject, "access_at"), 0, -1) == [stays.encode()]
        assert await client.hkeys(key(subject, "access_n")) == [stays.encode()]
        assert await client.zrange(key(subject, "dependents"), 0, -1) == [f"{stays}\0x".encode()]
        assert await client.scard(key(subject, "rejected")) == 0
        assert await client.hkeys(key(subject, "review")) == [b"r2"]
        assert await client.zrange(key(subject, "review_open"), 0, -1) == [b"r2"]
        assert att.deleted["redis:review"] == att.deleted["redis:review_open"] == 1

        # A whole-subject erase deletes every such key, and the subject's index entries.
        await client.zadd(key(subject, "access_at"), {stays: 2})
        att = attested(await w.erase(erase(subject)))
        assert att.verified, att.remaining
        left = {k.decode().rsplit(":", 1)[1] async for k in client.scan_iter(f"{prefix}:*")}
        assert left <= {"meta", "applied", "applied_at", "observations", "review_index"}
        assert await client.hgetall(f"{prefix}:review_index") == {}

    run(redis_url, milvus_uri, prefix, scenario)
