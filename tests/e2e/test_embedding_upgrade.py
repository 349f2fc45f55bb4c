"""An embedding upgrade through real worker processes and the real CLI.

The store is built by a worker on the default embedder (no setting: a new store's
model). The "new model" is the MiniLM folder under another name, loaded by path
(``SLOTWISE_EMBEDDER=st:<folder>``): another stamp, so slotwise must treat it
as another model, with no second download. A worker on it is refused by the
old model's collection; after ``migrate adapter fit``, ``validate`` and
``enable`` it starts, searches the old collection through the adapter, and
the row it writes carries the adapter's stamp.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pymilvus import MilvusClient

from slotwise.models.embedders import DEFAULT_MODEL, minilm_model_dir
from slotwise.topics.records import CandidateFact
from tests.e2e.harness import Pipeline, store_call

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

PLACES = "Lisbon Porto Berlin Paris Madrid Rome Oslo Vienna Prague Dublin".split()
HOBBIES = "chess piano climbing tennis baking running painting".split()


def _free_text(subject: str, text: str) -> CandidateFact:
    return CandidateFact(
        candidate_id=str(uuid.uuid4()),
        subject_id=subject,
        text=text,
        observed_at=datetime(2026, 3, 14, tzinfo=UTC),
    )


def _migrate(pipeline: Pipeline, embedder: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slotwise.streams", "migrate", *args],
        env={**pipeline.env, "SLOTWISE_EMBEDDER": embedder, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _stamps(pipeline: Pipeline, subject: str) -> dict[str, str]:
    settings = pipeline.deployment
    client = MilvusClient(uri=settings.milvus_uri)
    try:
        rows = client.query(
            settings.milvus_alias,
            filter=f'subject_id == "{subject}"',
            output_fields=["text", "embedding_model"],
        )
    finally:
        client.close()
    return {str(r["text"]): str(r["embedding_model"]) for r in rows}


def test_a_worker_on_a_new_model_is_refused_until_an_adapter_bridges_it(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    subject = f"user-{uuid.uuid4().hex[:8]}"
    stored = [
        _free_text(subject, f"User enjoys {hobby} on weekends in {place}.")
        for place in PLACES
        for hobby in HOBBIES[:4]
    ]
    old = pipeline.worker()
    old.wait_healthy()
    pipeline.wait_committed(
        pipeline.catalogue.candidates, pipeline.publish(pipeline.catalogue.candidates, stored)
    )
    old.stop(30)

    folder = tmp_path / "all-MiniLM-L6-v2-renamed"
    folder.symlink_to(minilm_model_dir(), target_is_directory=True)
    new_model = f"st:{folder}"
    pipeline.extra_env["SLOTWISE_EMBEDDER"] = new_model
    refused = pipeline.worker(instance="new-refused")
    assert refused.process is not None and refused.process.wait(120) != 0
    (refusal,) = [line for line in refused.log_tail(200).splitlines() if "refused to start" in line]
    assert f"embedded with {DEFAULT_MODEL}, but queries" in refusal  # a new store's default
    assert "queries are embedded with all-MiniLM-L6-v2-renamed" in refusal
    assert "Traceback" not in refused.log_tail(200)

    fitted = _migrate(pipeline, new_model, "adapter", "fit", "--sample", "40")
    assert fitted.returncode == 0, fitted.stderr
    stamp = next(w for w in fitted.stdout.split() if w.startswith("all-MiniLM-L6-v2-renamed>"))
    version = stamp.rsplit(":", 1)[1]
    validated = _migrate(pipeline, new_model, "adapter", "validate", version)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    enabled = _migrate(pipeline, new_model, "adapter", "enable", version)
    assert enabled.returncode == 0, enabled.stdout + enabled.stderr

    bridged = pipeline.worker(instance="new-bridged")
    bridged.wait_healthy()
    trip = _free_text(subject, "User went climbing in Lisbon last weekend.")
    pipeline.wait_committed(
        pipeline.catalogue.candidates, pipeline.publish(pipeline.catalogue.candidates, [trip])
    )
    assert store_call(pipeline, "applied", subject, trip.candidate_id) is not None
    stamps = _stamps(pipeline, subject)
    assert stamps[trip.text] == stamp
    assert {stamps[c.text] for c in stored} == {DEFAULT_MODEL}
