"""The review store and the provenance index against the real Redis server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar

import pytest
import redis.asyncio as aioredis

from slotwise.sinks.redis.provenance import RedisProvenance
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.records import CandidateFact, Fact, ReviewItem

pytestmark = pytest.mark.redis

T = TypeVar("T")
T0 = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


def run(url: str, prefix: str, scenario: Callable[[RedisStore], Awaitable[T]]) -> T:
    async def main() -> T:
        store = RedisStore(aioredis.from_url(url), prefix=prefix)
        try:
            return await scenario(store)
        finally:
            await store.close()

    return asyncio.run(main())


def item(subject: str, review_id: str, **fields: object) -> ReviewItem:
    candidate = CandidateFact(
        candidate_id=f"c-{review_id}", subject_id=subject, text="t", observed_at=T0
    )
    return ReviewItem(
        review_id=review_id, subject_id=subject, kind="high_stakes", reason="r",
        candidate=candidate, created_at=T0, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def fact(subject: str, fact_id: str, **fields: object) -> Fact:
    body: dict[str, object] = {
        "fact_id": fact_id, "subject_id": subject, "attribute": None, "value": None,
        "text": fact_id, "category": None, "status": "current", "valid_from": T0,
        "observed_at": T0, "recorded_at": T0, "source": "chat", "confidence": 0.8,
        "importance": 0.5, "candidate_id": fact_id,
    }  # fmt: skip
    return Fact.model_validate({**body, **fields})


def test_an_item_is_filed_once_and_a_resolution_is_final(redis_url: str, prefix: str) -> None:
    subject = f"user/{{x}}-{uuid.uuid4().hex[:6]}"

    async def scenario(store: RedisStore) -> None:
        reviews = RedisReviews(store, prefix=prefix)
        opened = item(subject, "r1")
        await reviews.file([opened])
        await reviews.file([opened])  # a replay
        assert [i.review_id for i in await reviews.open_items(subject)] == ["r1"]
        assert await reviews.locate("r1") == subject and await reviews.open_subjects() == [subject]
        rejected = opened.model_copy(update={"status": "rejected", "resolution": "no"})
        await reviews.file([rejected], {"r1": ["k1", "k2"]})
        await reviews.file([opened])  # a replayed creation after the resolution
        await reviews.file([opened.model_copy(update={"status": "accepted"})])  # a second decision
        assert await reviews.open_items(subject) == []
        stored = await reviews.get(subject, "r1")
        assert stored is not None and stored.status == "rejected"
        assert await reviews.locate("r1") is None and await reviews.open_subjects() == []
        assert await reviews.rejected(subject, ["k1", "k3"]) == frozenset({"k1"})
        assert await reviews.rejections(subject) == frozenset({"k1", "k2"})
        await reviews.file([item(subject, "r2")])
        assert await reviews.forget_subject(subject) == 1 and await reviews.open_subjects() == []

    run(redis_url, prefix, scenario)


def test_a_chain_reads_as_its_head_in_one_call_and_links_index_by_source(
    redis_url: str, prefix: str
) -> None:
    subject = f"user-{uuid.uuid4().hex[:6]}"

    async def scenario(store: RedisStore) -> None:
        provenance = RedisProvenance(store, prefix=prefix)
        a = fact(subject, "A", status="superseded", superseded_by="B")
        b = fact(subject, "B", status="superseded", superseded_by="C", supersedes="A")
        c = fact(subject, "C", supersedes="B")
        summary = fact(subject, "S", derived_from=("A", "C"))
        outcome = await store.apply(
            subject, "e1", expected_version=0, facts=[a, b, c, summary], outputs=b"{}", now=T0
        )
        assert not outcome.stale
        head = await provenance.head(subject, "A")
        assert head is not None and head.fact == c and head.chain == ("A", "B", "C")
        current = await provenance.head(subject, "C")
        assert current is not None and current.chain == ("C",)
        assert await provenance.head(subject, "nope") is None
        await provenance.record([summary])
        await provenance.record([summary])
        assert await provenance.dependents(subject, ["A", "C", "B"]) == {"A": ("S",), "C": ("S",)}
        await provenance.remember_compared(subject, ["p1"])
        assert await provenance.compared(subject) == frozenset({"p1"})
        assert subject in [s async for s in provenance.subjects()]

    run(redis_url, prefix, scenario)
