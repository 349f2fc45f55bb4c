"""A served deployment with two subjects' facts (and ids that look like injections)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from slotwise.processors.model import VectorRow
from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.streams.config import Settings
from slotwise.streams.dev.testing import WorkerProcess, drop_deployment
from slotwise.streams.read.embedder_choice import configured_embedder
from tests.streams.api.server import Seeded, ServerThread, deployment, fact

TOKEN = "s3cret-token"
# Each subject owns facts; a response about one must never hold another's.
SUBJECTS = {
    "ana": ["Datadog", "Stripe"],
    "bob": ["Acme"],
    'a" or subject_id != "': ["Initech"],
    "a}*": ["Globex"],
    "user/42": ["Hooli"],
}


def _index(settings: Settings, seeded: Seeded) -> None:
    async def run() -> None:
        index = MilvusIndex(
            settings.milvus_uri,
            configured_embedder(settings),  # as `serve` will: the store's, else the default
            alias=settings.milvus_alias,
            prefix=settings.milvus_collection_prefix,
        )
        try:
            await index.setup()
            index.add(
                VectorRow(f.fact_id, f.subject_id, f.text, f.category)
                for facts in seeded.facts.values()
                for f in facts
            )
            await index.flush()
        finally:
            await index.close()

    asyncio.run(run())


@pytest.fixture(scope="module")
def served(stack: Settings) -> Iterator[tuple[Settings, Seeded]]:
    """A deployment whose Redis and Milvus hold the facts of SUBJECTS, its topics created."""
    settings = deployment(stack)
    ensure_topics(settings.librdkafka(), settings.catalogue())
    seeded = Seeded(settings)
    try:
        n = 0
        for subject, values in SUBJECTS.items():
            facts = []
            for i, value in enumerate(values):
                n += 1
                closed = i < len(values) - 1
                facts.append(
                    fact(
                        subject,
                        f"f{n}",
                        value,
                        status="superseded" if closed else "current",
                        superseded_by=f"f{n + 1}" if closed else None,
                        supersedes=f"f{n - 1}" if i else None,
                    )
                )
            seeded.write(facts)
        _index(settings, seeded)
        yield settings, seeded
    finally:
        drop_deployment(settings)


@pytest.fixture(scope="module")
def api(served: tuple[Settings, Seeded]) -> Iterator[str]:
    """The base URL of a server without a token."""
    server = ServerThread(served[0], max_wait_s=0.2).start()
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def guarded_api(served: tuple[Settings, Seeded]) -> Iterator[str]:
    """The base URL of a server that needs ``TOKEN``."""
    server = ServerThread(served[0], token=TOKEN, max_wait_s=0.2).start()
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def worker(
    served: tuple[Settings, Seeded], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """A worker applying the served deployment (the offline extractor: no model)."""
    log = Path(tmp_path_factory.mktemp("worker")) / "worker.log"
    process = WorkerProcess(served[0], "w0", log).start()
    try:
        process.wait_healthy()
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def written(served: tuple[Settings, Seeded], worker: WorkerProcess) -> Iterator[str]:
    """The base URL of a server over a deployment a worker applies."""
    server = ServerThread(served[0], max_wait_s=60).start()
    yield server.url
    server.stop()
