"""The one read side against the real Redis: subjects kept apart, every read through one hook."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.read.reads import FactQuery, InvalidQuery, Reads, check_subject
from slotwise.topics.records import Fact

pytestmark = [pytest.mark.redis]

INJECTIONS = ['a" or subject_id != "', "a}*", "a:{b}", "*", "user-42%2F..", "ünï/cødé"]


def fact(subject: str, fact_id: str, value: str, **fields: object) -> Fact:
    base: dict[str, object] = {
        "schema": "fact/1",
        "fact_id": fact_id,
        "subject_id": subject,
        "attribute": "employer",
        "value": value,
        "text": f"User works at {value}.",
        "category": "job",
        "status": "current",
        "valid_from": datetime(2026, 3, 1, tzinfo=UTC),
        "observed_at": datetime(2026, 3, 1, tzinfo=UTC),
        "recorded_at": datetime(2026, 3, 1, tzinfo=UTC),
        "source": "chat",
        "confidence": 0.9,
        "importance": 0.5,
        "candidate_id": f"c-{fact_id}",
    }
    return Fact.model_validate({**base, **fields})


async def seed(store: RedisStore, facts: Sequence[Fact]) -> None:
    subject = facts[0].subject_id
    outcome = await store.apply(
        subject,
        f"seed-{uuid.uuid4().hex}",
        expected_version=await store.version(subject),
        facts=facts,
        outputs=b"{}",
        now=datetime.now(UTC),
    )
    assert not outcome.stale


def test_every_subject_reads_its_own_facts_only(redis_url: str) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}"
    seen: list[tuple[str, int, str]] = []

    async def record(subject: str, facts: Sequence[Fact], via: str) -> None:
        seen.append((subject, len(facts), via))

    async def run() -> None:
        store = RedisStore.from_url(redis_url, prefix=prefix)
        try:
            subjects = ["a", *INJECTIONS]
            for n, subject in enumerate(subjects):
                await seed(store, [fact(subject, f"f{n}", f"Company {n}")])
            reads = Reads(store, on_read=record)
            for n, subject in enumerate(subjects):
                found = await reads.facts(subject, via="cli")
                assert [(f.subject_id, f.value) for f in found] == [(subject, f"Company {n}")]
                assert await reads.facts(subject, FactQuery(history=True)) == found
            assert await reads.facts("nobody") == []
            assert ("a", 1, "cli") in seen
            # A fact id of another subject asked for by id is not found under this one.
            assert await reads.facts("a", FactQuery(), only=["f1", "f2"]) == []
        finally:
            await store.close()

    asyncio.run(run())


@pytest.mark.parametrize(
    ("subject", "why"),
    [("", "at least 1"), ("   ", "blank"), ("a\nb", "control"), ("x" * 257, "at most 256")],
)
def test_a_subject_id_a_record_would_refuse_is_an_invalid_query(subject: str, why: str) -> None:
    with pytest.raises(InvalidQuery, match=why) as caught:
        check_subject(subject)
    assert caught.value.field == "subject_id"
