"""Fixtures that run real worker processes against the real stack."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.streams.config import Settings
from slotwise.streams.dev.testing import WorkerProcess, drop_deployment
from slotwise.topics.catalogue import Catalogue
from tests.e2e.harness import Pipeline
from tests.e2e.migration import DeploymentFactory, deployment_settings

TEST_PARTITIONS = 3

FOREIGN = "slotwise_vector_foreign_results_total"


def foreign_hits(pipeline: Pipeline) -> float:
    """Vector hits of another subject dropped by the live workers (must stay 0)."""
    total = 0.0
    for worker in pipeline.workers:
        if worker.alive():
            samples = _exported(worker)
            assert FOREIGN in samples, f"{worker.name} exported no {FOREIGN}:\n{worker.log_tail()}"
            total += samples[FOREIGN]
    return total


def _exported(worker: WorkerProcess, timeout: float = 60.0) -> dict[str, float]:
    """The worker's metrics once it answers: a replica restarted just before the test
    ended may still be starting, and a loaded one may miss a single scrape's deadline."""
    deadline = time.monotonic() + timeout
    while not (samples := worker.metrics()) and time.monotonic() < deadline and worker.alive():
        time.sleep(0.5)
    return samples


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


@pytest.fixture
def deployment_factory(stack: Settings) -> Iterator[DeploymentFactory]:
    """``deployment_factory() -> Settings``: a fresh namespace on the old model, MiniLM,
    noticing a migration within 0.5 s (``tests/e2e/migration.py``); its Redis keys
    and Milvus collections are removed after the test."""
    made: list[Settings] = []

    def make() -> Settings:
        made.append(deployment_settings(f"t{uuid.uuid4().hex[:10]}"))
        return made[-1]

    yield make
    for settings in made:
        drop_deployment(settings)


@pytest.fixture
def deployment(deployment_factory: DeploymentFactory, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """One deployment (see ``deployment_factory``), its settings in this process's
    environment too, for the children it starts."""
    settings = deployment_factory()
    for name, value in settings.to_env().items():
        monkeypatch.setenv(name, value)
    return settings
