"""Fixtures that run real worker processes against the real stack."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from slotwise.streams.settings import Settings
from slotwise.topics.admin import ensure_topics
from slotwise.topics.catalogue import Catalogue
from tests.e2e.harness import Pipeline

TEST_PARTITIONS = 3

FOREIGN = "slotwise_vector_foreign_results_total"


def foreign_hits(pipeline: Pipeline) -> float:
    """Vector hits of another subject dropped by the live workers (must stay 0)."""
    total = 0.0
    for worker in pipeline.workers:
        if worker.alive():
            samples = worker.metrics()
            assert FOREIGN in samples, f"{worker.name} exported no {FOREIGN}:\n{worker.log_tail()}"
            total += samples[FOREIGN]
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
            pipeline.drop()


@pytest.fixture
def pipeline(pipeline_factory: PipelineFactory) -> Pipeline:
    """One pipeline (see ``pipeline_factory``)."""
    return pipeline_factory()
