"""A store built on candle's MiniLM, upgraded to the default ONNX embedder by migration.

Two twin pipelines get the same candidates. The control runs ``minilm`` (candle,
fp32) throughout. The other is built on ``minilm`` too, then its worker is
restarted with ``SLOTWISE_EMBEDDER`` unset, as an upgrade leaves it: it keeps its
store's model instead of refusing to start, and says once how to move. Then the
real CLI runs ``migrate start --to minilm-onnx`` (the old model's setting taken
from the collection's stamp), ``backfill``, ``validate`` and ``switch`` while
that worker dual-writes a second batch; a worker restarted with the setting
still unset follows the alias onto ``minilm-onnx`` and writes a third batch
(restatements, changed slots and free-text near-duplicates of the first two,
found by vector search). Both pipelines must then have decided alike: the same
facts, statuses and links, and the same open reviews about the same nearest facts.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from pymilvus import MilvusClient

from slotwise.models.embedders import DEFAULT_EMBEDDER, DEFAULT_MODEL, MiniLMEmbedder
from slotwise.sinks.milvus.collections import GRPC_OPTIONS, collection_model
from slotwise.sinks.redis.review import RedisReviews
from slotwise.streams.read.store import open_store
from slotwise.topics.records import CandidateFact
from tests.e2e.conftest import PipelineFactory
from tests.e2e.harness import Pipeline, store_call

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

T0 = datetime(2026, 3, 1, tzinfo=UTC)
HINT = f"slotwise migrate start --to {DEFAULT_EMBEDDER}"
# Volatile per run, not decisions: when it was written, with which model's vectors.
VOLATILE = {"recorded_at", "embedding_model", "last_verified"}


def _said(subject: str, day: int, text: str, attribute: str | None = None) -> CandidateFact:
    value = text.rsplit(" ", 1)[-1].rstrip(".") if attribute else None
    return CandidateFact(
        candidate_id=str(uuid.uuid4()),
        subject_id=subject,
        attribute=attribute,
        value=value,
        text=text,
        observed_at=T0 + timedelta(days=day),
        confidence=0.9,
    )


def _batches(subjects: list[str]) -> list[list[CandidateFact]]:
    first, second, third = [], [], []
    for s in subjects:
        first += [
            _said(s, 1, "User's employer is Datadog", "employer"),
            _said(s, 1, "User's diet is vegetarian", "diet"),
            _said(s, 1, "User plays chess at the Lisbon club on Tuesdays."),
            _said(s, 1, "User is learning to bake sourdough bread."),
        ]
        second += [
            _said(s, 3, "User's employer is Stripe", "employer"),
            _said(s, 3, "User climbs at an indoor gym in Porto."),
        ]
        third += [
            _said(s, 5, "User's diet is vegan", "diet"),  # a changed slot: supersedes
            _said(s, 5, "User's employer is Stripe", "employer"),  # a restatement
            _said(s, 5, "User plays chess at the Lisbon club every Tuesday."),  # near-duplicate
            _said(s, 5, "User goes bouldering at an indoor gym in Porto."),
            _said(s, 5, "User started running half marathons."),
        ]
    return [first, second, third]


def _feed(pipeline: Pipeline, batch: list[CandidateFact]) -> None:
    topic = pipeline.catalogue.candidates
    pipeline.wait_committed(topic, pipeline.publish(topic, batch), timeout=300)


def _migrate(pipeline: Pipeline, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "slotwise.streams", "migrate", *args],
        env={**pipeline.env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"migrate {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _decisions(pipeline: Pipeline, subjects: list[str]) -> dict[str, object]:
    """Every fact (history too) by candidate, and the open reviews, of each subject."""
    decided: dict[str, object] = {}
    for subject in subjects:
        facts = store_call(pipeline, "facts", subject, include_history=True)
        assert isinstance(facts, list) and facts
        decided[subject] = sorted(
            (
                tuple(sorted((k, str(v)) for k, v in f.model_dump().items() if k not in VOLATILE))
                for f in facts
            ),
        )
    return decided


def _reviews(pipeline: Pipeline, subjects: list[str]) -> dict[str, list[tuple[str, ...]]]:
    """The open review items of each subject: kind, candidate, the nearest incumbent.

    The item also lists every neighbour above the vector floor, for the reviewer; one
    whose cosine sits at the floor may be listed by one model and not the other (their
    neighbours agree at Recall@10 ~0.98), which is context shown, not a decision.
    """

    async def read() -> dict[str, list[tuple[str, ...]]]:
        store = open_store(pipeline.settings, prefix=pipeline.redis_prefix)
        try:
            reviews = RedisReviews(store, prefix=pipeline.redis_prefix)
            return {
                s: sorted(
                    (i.kind, i.candidate.candidate_id, i.incumbent_fact_ids[0])
                    for i in await reviews.open_items(s)
                )
                for s in subjects
            }
        finally:
            await store.close()

    return asyncio.run(read())


def _alias_model(pipeline: Pipeline) -> str | None:
    client = MilvusClient(uri=pipeline.settings.milvus_uri, grpc_options=GRPC_OPTIONS)
    try:
        name = str(client.describe_alias(pipeline.milvus_alias)["collection_name"])
        return collection_model(client, name)
    finally:
        client.close()


def test_a_candle_store_keeps_its_model_then_migrates_to_the_default_with_the_same_decisions(
    pipeline_factory: PipelineFactory,
) -> None:
    subjects = [f"user-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    first, second, third = _batches(subjects)
    control, upgraded = pipeline_factory(), pipeline_factory()
    for pipeline in (control, upgraded):
        pipeline.extra_env["SLOTWISE_EMBEDDER"] = "minilm"
        pipeline.extra_env["SLOTWISE_MIGRATION_POLL_S"] = "0.5"

    candle = control.worker()
    built = upgraded.worker(instance="built")
    for worker in (candle, built):
        worker.wait_healthy()
    for batch in (first, second, third):
        _feed(control, batch)
    _feed(upgraded, first)
    built.stop(30)
    assert _alias_model(upgraded) == MiniLMEmbedder.model_name

    # The upgrade: the setting unset. The store keeps its model, and the log says how to move.
    del upgraded.extra_env["SLOTWISE_EMBEDDER"]
    kept = upgraded.worker(instance="kept")
    kept.wait_healthy()
    assert HINT in kept.log_tail(400)

    started = _migrate(upgraded, "start", "--to", DEFAULT_EMBEDDER)
    assert f"({MiniLMEmbedder.model_name}) -> " in started and f"({DEFAULT_MODEL})" in started
    _feed(upgraded, second)  # dual-written by the worker still on candle
    _migrate(upgraded, "backfill", "--batch", "8")
    validated = _migrate(upgraded, "validate", "--sample", "10", "--min-recall", "0.8")
    assert "passed" in validated
    _migrate(upgraded, "switch")
    kept.stop(30)
    assert _alias_model(upgraded) == DEFAULT_MODEL

    moved = upgraded.worker(instance="moved")
    moved.wait_healthy()
    assert HINT not in moved.log_tail(400)
    _feed(upgraded, third)

    assert _decisions(upgraded, subjects) == _decisions(control, subjects)
    assert _reviews(upgraded, subjects) == _reviews(control, subjects)
    stamps = {str(r["text"]): str(r["embedding_model"]) for r in _rows(upgraded, subjects)}
    assert {stamps[c.text] for c in third if c.text in stamps} == {DEFAULT_MODEL}


def _rows(pipeline: Pipeline, subjects: list[str]) -> list[dict[str, object]]:
    client = MilvusClient(uri=pipeline.settings.milvus_uri, grpc_options=GRPC_OPTIONS)
    try:
        return [
            dict(r)
            for s in subjects
            for r in client.query(
                pipeline.milvus_alias,
                filter=f'subject_id == "{s}"',
                output_fields=["text", "embedding_model"],
            )
        ]
    finally:
        client.close()
