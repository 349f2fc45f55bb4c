"""Two namespaces side by side on the one stack: each deployment sees its own data only.

``SLOTWISE_NAMESPACE`` names a deployment's topics, Redis keys, Milvus
collections and alias, and consumer group at once. Two workers whose
environments differ in nothing but their namespace (and metrics port) write
the same subject with different values; each namespace's facts, keys,
collections, alias, topics and group hold its own. The alias matters most:
before namespaces, two deployments with different prefixes still shared
Milvus's ``facts_current``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis
from pymilvus import MilvusClient

from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.sinks.milvus.index import GRPC_OPTIONS
from slotwise.streams.config import Settings
from slotwise.streams.dev.testing import WorkerProcess, committed_offsets
from slotwise.topics.codec import decode_record
from slotwise.topics.records import CandidateFact, Fact
from tests.e2e.conftest import TEST_PARTITIONS, foreign_hits
from tests.e2e.harness import Pipeline, store_call

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

# What a namespace derives; Settings.to_env() would pin them, the workers must not be told.
DERIVED = ("topic_prefix", "redis_prefix", "milvus_collection_prefix", "milvus_alias", "group_id")
# Each namespace's version of the one subject: (attribute, value, text); None is free text.
WRITES = {
    "a": [
        ("home_city", "Porto", "User lives in Porto."),
        ("employer", "Datadog", "User works at Datadog."),
        (None, None, "User goes hiking in Sintra on weekends."),
    ],
    "b": [
        ("home_city", "Lisbon", "User lives in Lisbon."),
        ("employer", "Stripe", "User works at Stripe."),
        (None, None, "User goes surfing in Ericeira on weekends."),
    ],
}


@pytest.fixture
def side_by_side(stack: Settings, tmp_path: Path) -> Iterator[dict[str, Pipeline]]:
    """A pipeline per namespace, named by it; everything either created is removed after."""
    run = uuid.uuid4().hex[:6]
    shared = stack.model_dump(exclude={"namespace", *DERIVED})
    pipelines = {
        side: Pipeline.named_by(
            Settings(**{**shared, "namespace": f"ns{run}-{side}", "partitions": TEST_PARTITIONS}),
            tmp_path,
        )
        for side in WRITES
    }
    try:
        for pipeline in pipelines.values():
            ensure_topics(pipeline.settings.librdkafka(), pipeline.catalogue)
        yield pipelines
    finally:
        for pipeline in pipelines.values():
            pipeline.stop_all()
        for pipeline in pipelines.values():
            pipeline.drop()


def _start_worker(pipeline: Pipeline) -> WorkerProcess:
    """A worker told its namespace but none of the names it derives."""
    worker = WorkerProcess(pipeline.deployment, "w0", pipeline.log_dir / f"{pipeline.group_id}.log")
    for name in DERIVED:
        del worker.env[f"SLOTWISE_{name.upper()}"]
    pipeline.workers.append(worker)
    return worker.start()


def _candidates(subject: str, side: str) -> list[CandidateFact]:
    return [
        CandidateFact(
            candidate_id=str(uuid.uuid4()),
            subject_id=subject,
            attribute=attribute,
            value=value,
            text=text,
            observed_at=datetime(2026, 1, 1 + i, tzinfo=UTC),
            confidence=0.9,
        )
        for i, (attribute, value, text) in enumerate(WRITES[side])
    ]


def _texts(side: str) -> set[str]:
    return {text for *_, text in WRITES[side]}


def _other(side: str) -> str:
    (other,) = set(WRITES) - {side}
    return other


def test_two_namespaces_share_a_stack_and_nothing_else(side_by_side: dict[str, Pipeline]) -> None:
    names = {
        side: (p.catalogue.prefix, p.redis_prefix, p.milvus_alias, p.group_id)
        for side, p in side_by_side.items()
    }
    assert not set(names["a"]) & set(names["b"]), names
    workers = {side: _start_worker(p) for side, p in side_by_side.items()}
    env_a, env_b = workers["a"].env, workers["b"].env
    assert {k for k in env_a.keys() | env_b.keys() if env_a.get(k) != env_b.get(k)} == {
        "SLOTWISE_NAMESPACE",
        "SLOTWISE_METRICS_PORT",
    }
    for worker in workers.values():
        worker.wait_healthy()

    subject = f"twin-{uuid.uuid4().hex[:6]}"
    ends = {
        side: p.publish(p.catalogue.candidates, _candidates(subject, side))
        for side, p in side_by_side.items()
    }
    for side, p in side_by_side.items():
        p.wait_committed(p.catalogue.candidates, ends[side])

    for side, p in side_by_side.items():
        other = side_by_side[_other(side)]
        # Facts, read back through the namespace's own RedisStore prefix.
        facts = store_call(p, "facts", subject, include_history=True)
        assert isinstance(facts, list)
        assert {f.text for f in facts} == _texts(side)
        assert {f.value for f in facts if f.attribute == "home_city"} == {WRITES[side][0][1]}
        # The facts topic: the namespace's own facts, nothing of the other's.
        published = [
            decode_record(value, expect=(Fact,))
            for _, value, _ in p.read_committed(p.catalogue.facts)
            if value is not None
        ]
        assert {f.text for f in published if isinstance(f, Fact)} == _texts(side)
        # The group: committed past its own candidates, never on the other's topic.
        done = p.committed(p.catalogue.candidates)
        assert sum(max(0, offset) for offset in done.values()) == len(WRITES[side]), done
        elsewhere = committed_offsets(
            p.settings, p.group_id, other.catalogue.candidates, TEST_PARTITIONS
        )
        assert all(offset < 0 for offset in elsewhere.values()), elsewhere

    _assert_redis_apart(side_by_side, subject)
    _assert_milvus_apart(side_by_side, subject)
    for p in side_by_side.values():
        assert foreign_hits(p) == 0, "a vector search returned another subject's rows"


def _assert_redis_apart(pipelines: dict[str, Pipeline], subject: str) -> None:
    settings = pipelines["a"].settings
    client = redis.Redis.from_url(settings.redis_url)
    try:
        prefixes = tuple(f"{p.redis_prefix}:".encode() for p in pipelines.values())
        of_subject = list(client.scan_iter(match=f"*{subject}*", count=1000))
        strays = [key for key in of_subject if not key.startswith(prefixes)]
        assert not strays, f"keys of the subject outside both namespaces: {strays}"
        for side, p in pipelines.items():
            held = b"\0".join(
                b"\0".join(client.hvals(key))
                for key in client.scan_iter(match=f"{p.redis_prefix}:*", count=1000)
                if client.type(key) == b"hash"
            )
            assert all(text.encode() in held for text in _texts(side)), side
            leaked = [t for t in _texts(_other(side)) if t.encode() in held]
            assert not leaked, f"namespace {side}'s keys hold the other's {leaked}"
    finally:
        client.close()


def _assert_milvus_apart(pipelines: dict[str, Pipeline], subject: str) -> None:
    client = MilvusClient(uri=pipelines["a"].settings.milvus_uri, grpc_options=GRPC_OPTIONS)
    try:
        aliases = client.list_aliases().get("aliases", [])
        collections = client.list_collections()
        targets: dict[str, str] = {}
        for side, p in pipelines.items():
            prefix = p.deployment.milvus_collection_prefix
            own = sorted(c for c in collections if c.startswith(f"{prefix}_"))
            assert own, f"namespace {side} has no collection"
            assert p.milvus_alias in aliases, (
                f"namespace {side}'s alias {p.milvus_alias} is missing"
            )
            targets[side] = client.describe_alias(p.milvus_alias)["collection_name"]
            assert targets[side] in own, (side, targets[side], own)
            texts = _rows(client, own, subject, expected=len(WRITES[side]))
            assert texts == _texts(side), f"namespace {side}'s collections hold {texts}"
        assert targets["a"] != targets["b"], "the two namespaces share one collection"
        if "facts_current" in aliases:  # the shared default alias, when a default deployment runs
            shared = client.describe_alias("facts_current")["collection_name"]
            assert shared not in targets.values(), "a namespace wrote behind facts_current"
    finally:
        client.close()


def _rows(client: MilvusClient, collections: list[str], subject: str, expected: int) -> set[str]:
    """The subject's texts over ``collections``, once ``expected`` rows are visible (or 60 s)."""
    deadline = time.monotonic() + 60
    while True:
        texts = [
            row["text"]
            for name in collections
            for row in client.query(
                name,
                filter=f'subject_id == "{subject}"',
                output_fields=["text"],
                consistency_level="Strong",
            )
        ]
        if len(texts) >= expected or time.monotonic() > deadline:
            assert len(texts) == expected, f"{len(texts)} rows of {subject} in {collections}"
            return set(texts)
        time.sleep(0.5)
