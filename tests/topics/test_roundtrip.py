"""Every record kind through the real broker: on its key's partition, decoded unchanged."""

from __future__ import annotations

import zlib
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Message, Producer
from pydantic import BaseModel

from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import CONTENT_TYPE, decode_record, encode_record
from slotwise.topics.records import (
    CandidateFact,
    Command,
    ErasureAttestation,
    Fact,
    Observation,
    ReviewItem,
    SupersessionEvent,
)

pytestmark = pytest.mark.kafka

_T = "2026-03-14T10:00:00Z"
Build = Callable[[str], BaseModel]


def _default_partition(key: bytes, partitions: int) -> int:
    """librdkafka's default ``consistent_random`` partitioner: CRC32 of the key, modulo."""
    return zlib.crc32(key) % partitions


def _one_per_partition(build: Build, key_field: str, partitions: int) -> dict[str, BaseModel]:
    """Records whose keys cover every partition once, so a wrong partition cannot pass."""
    found: dict[int, BaseModel] = {}
    i = 0
    while len(found) < partitions:
        record = build(f"user-{i}")
        key: str = getattr(record, key_field)
        found.setdefault(_default_partition(key.encode(), partitions), record)
        i += 1
    return {getattr(r, key_field): r for r in found.values()}


def _observation(subject: str) -> Observation:
    return Observation.model_validate(
        {"schema": "observation/1", "observation_id": f"obs-{subject}", "subject_id": subject,
         "session_id": "s-9", "text": "I start at Stripe on Monday.", "observed_at": _T,
         "metadata": {"client": "web", "tags": ["a", "b"]}}
    )  # fmt: skip


def _candidate(subject: str) -> CandidateFact:
    return CandidateFact.model_validate(
        {"schema": "candidate/1", "candidate_id": f"cand-{subject}", "subject_id": subject,
         "attribute": "employer", "value": "Stripe", "text": "User works at Stripe.",
         "category": "job", "observed_at": _T, "valid_from": "2026-03-16T00:00:00+01:00",
         "confidence": 0.9, "importance": 0.7, "observation_id": f"obs-{subject}"}
    )  # fmt: skip


def _command(subject: str) -> Command:
    return Command.model_validate(
        {"schema": "command/1", "command_id": f"cmd-{subject}", "subject_id": subject,
         "command": "erase", "issued_at": _T, "observation_id": f"obs-{subject}",
         "reason": "user asked to be forgotten"}
    )  # fmt: skip


def _fact(subject: str) -> Fact:
    return Fact.model_validate(
        {"schema": "fact/1", "fact_id": f"fact-{subject}", "subject_id": subject,
         "attribute": "employer", "value": "Stripe", "text": "User works at Stripe.",
         "category": "job", "status": "current", "valid_from": _T, "observed_at": _T,
         "recorded_at": _T, "source": "chat", "confidence": 0.9, "importance": 0.7,
         "supersedes": "fact-old", "candidate_id": f"cand-{subject}", "verification_count": 2,
         "embedding_model": "minilm-l6-v2"}
    )  # fmt: skip


def _supersession(subject: str) -> SupersessionEvent:
    return SupersessionEvent.model_validate(
        {"schema": "supersession/1", "event_id": f"ev-{subject}", "subject_id": subject,
         "attribute": "employer", "old_fact_id": "fact-old", "new_fact_id": f"fact-{subject}",
         "old_value": "Datadog", "new_value": "Stripe", "old_text": "User works at Datadog.",
         "new_text": "User works at Stripe.", "decided_by": "exact", "reason": "one-valued",
         "valid_from": _T, "observation_id": f"obs-{subject}", "recorded_at": _T}
    )  # fmt: skip


def _review(subject: str) -> ReviewItem:
    return ReviewItem.model_validate(
        {"schema": "review/1", "review_id": f"rev-{subject}", "subject_id": subject,
         "kind": "high_stakes", "reason": "allergy contradicted",
         "candidate": _candidate(subject).model_dump(mode="json", by_alias=True),
         "incumbent_fact_ids": ["fact-old", "fact-older"], "created_at": _T}
    )  # fmt: skip


def _erasure(subject: str) -> ErasureAttestation:
    return ErasureAttestation.model_validate(
        {"schema": "erasure/1", "attestation_id": f"att-{subject}", "subject_id": subject,
         "command_id": f"cmd-{subject}", "deleted": {"redis": 4, "milvus": 2},
         "remaining": {"redis": 0, "milvus": 0}, "verified": True, "completed_at": _T}
    )  # fmt: skip


# (record builder, topic of the catalogue, the field the topic is keyed by)
CASES: dict[str, tuple[Build, Callable[[Catalogue], str], str]] = {
    "observation": (_observation, lambda c: c.observations, "subject_id"),
    "candidate": (_candidate, lambda c: c.candidates, "subject_id"),
    "command": (_command, lambda c: c.candidates, "subject_id"),
    "supersession": (_supersession, lambda c: c.supersessions, "subject_id"),
    "fact": (_fact, lambda c: c.facts, "fact_id"),  # compacted: one entry per fact
    "review": (_review, lambda c: c.review, "subject_id"),
    "erasure": (_erasure, lambda c: c.erasures, "subject_id"),
}


def _consume(consumer: Consumer, count: int, timeout_s: float = 30.0) -> list[Message]:
    messages: list[Message] = []
    for batch in iter(lambda: consumer.consume(count - len(messages), timeout=timeout_s), []):
        for message in batch:
            assert message.error() is None, message.error()
        messages.extend(batch)
        if len(messages) >= count:
            break
    assert len(messages) == count, f"consumed {len(messages)} of {count} messages"
    return messages


@pytest.mark.parametrize("kind", list(CASES))
def test_a_record_lands_on_its_keys_partition_and_decodes_unchanged(
    kind: str,
    catalogue: Catalogue,
    producer_factory: Callable[..., Producer],
    consumer_factory: Callable[..., Consumer],
) -> None:
    build, topic_of, key_field = CASES[kind]
    topic = topic_of(catalogue)
    sent = _one_per_partition(build, key_field, catalogue.partitions)

    producer = producer_factory()
    for key, record in sent.items():
        producer.produce(
            topic, key=key.encode(), value=encode_record(record),
            headers=[("content-type", CONTENT_TYPE.encode())],
        )  # fmt: skip
    assert producer.flush(30) == 0

    consumer = consumer_factory()
    consumer.subscribe([topic])
    received = _consume(consumer, len(sent))

    for message in received:
        raw_key = message.key()
        assert raw_key is not None
        assert message.partition() == _default_partition(raw_key, catalogue.partitions)
        assert message.headers() == [("content-type", CONTENT_TYPE.encode())]
        original = sent[raw_key.decode()]
        subject_key = raw_key if key_field == "subject_id" else None
        assert decode_record(message.value(), key=subject_key, expect=(type(original),)) == original
    assert {m.partition() for m in received} == set(range(catalogue.partitions))
