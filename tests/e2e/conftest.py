"""Fixtures that run real worker processes against the real stack."""

from __future__ import annotations

import re
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
import redis
from pymilvus import MilvusClient, MilvusException

from sinks.milvus_index import GRPC_OPTIONS
from streams.settings import Settings
from tests.e2e.harness import Pipeline
from topics.admin import delete_topics, ensure_topics
from topics.catalogue import Catalogue

TEST_PARTITIONS = 3

_FOREIGN = re.compile(rb"^slotwise_vector_foreign_results_total(?:\{[^}]*\})? ([0-9.e+]+)$", re.M)


def foreign_hits(pipeline: Pipeline) -> float:
    """Vector hits of another subject dropped by the workers (must stay 0)."""
    total = 0.0
    for worker in pipeline.workers:
        if not worker.alive():
            continue
        with urllib.request.urlopen(f"http://127.0.0.1:{worker.port}/metrics", timeout=5) as r:
            total += sum(float(v) for v in _FOREIGN.findall(r.read()))
    return total


PipelineFactory = Callable[[], Pipeline]


@pytest.fixture
def pipeline_factory(
    stack: Settings, kafka_bootstrap: str, tmp_path: Path
) -> Iterator[PipelineFactory]:
    """``pipeline_factory() -> Pipeline``: fresh topics, a worker group, a Redis prefix
    and Milvus collections of their own, so two runs of one input can be compared.

    After the test: every Milvus search of the workers returned only the
    searched subject's rows; the workers stop; topics, Redis keys and Milvus
    collections are removed.
    """
    made: list[Pipeline] = []

    def make() -> Pipeline:
        catalogue = Catalogue(prefix=f"t{uuid.uuid4().hex[:8]}", partitions=TEST_PARTITIONS)
        ensure_topics(kafka_bootstrap, catalogue)
        pipeline = Pipeline(stack, catalogue, tmp_path)
        made.append(pipeline)
        return pipeline

    yield make
    try:
        for pipeline in made:
            assert foreign_hits(pipeline) == 0, "a vector search returned another subject's rows"
    finally:
        for pipeline in made:
            pipeline.stop_all()
            drop_pipeline_state(stack, pipeline)
            delete_topics(kafka_bootstrap, [spec.name for spec in pipeline.catalogue.specs()])


@pytest.fixture
def pipeline(pipeline_factory: PipelineFactory) -> Pipeline:
    """One pipeline (see ``pipeline_factory``)."""
    return pipeline_factory()


def drop_pipeline_state(settings: Settings, pipeline: Pipeline) -> None:
    client = redis.Redis.from_url(settings.redis_url)
    try:
        for key in client.scan_iter(match=f"{pipeline.redis_prefix}:*", count=1000):
            client.delete(key)
    finally:
        client.close()
    prefix = pipeline.milvus_alias.removesuffix("_current")
    attempts = 5
    for attempt in range(attempts):
        milvus = None
        try:
            milvus = MilvusClient(uri=settings.milvus_uri, grpc_options=GRPC_OPTIONS)
            if pipeline.milvus_alias in milvus.list_aliases().get("aliases", []):
                milvus.drop_alias(pipeline.milvus_alias)
            for name in milvus.list_collections():
                if name.startswith(prefix):
                    milvus.drop_collection(name)
            return
        except (MilvusException, grpc.RpcError):
            # The Lite server drops busy channels now and then; cleanup must not fail a test.
            if attempt == attempts - 1:
                raise
            time.sleep(3)
        finally:
            if milvus is not None:
                milvus.close()
