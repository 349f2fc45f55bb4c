"""The local Milvus Lite server prunes by partition key and answers exactly as unpruned."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import milvus_lite
import numpy as np
import pytest
from milvus_lite.engine.collection import Collection
from pymilvus import DataType, MilvusClient

from slotwise.sinks.milvus.collections import GRPC_OPTIONS, READ_CONSISTENCY, of_subject
from slotwise.streams.dev.milvus_lite import Milvus
from slotwise.streams.dev.milvus_lite_server import bucket, install_pruning, pinned_key
from slotwise.streams.dev.services import address_of
from slotwise.streams.dev.testing import free_port

_DIMENSION = 8
_SUBJECTS = 60


@pytest.mark.parametrize(
    ("expr", "key"),
    [
        ('subject_id == "user-42"', "user-42"),
        ('subject_id == "user-42" and not (fact_id in ["a", "b"])', "user-42"),
        ('category == "job" and subject_id == "u"', "u"),
        ('subject_id == "a" or subject_id == "b"', None),
        ('subject_id in ["a"]', None),
        ('subject_id != "a"', None),
        ('not (subject_id == "a")', None),
        ('category == "job"', None),
        ("subject_id == ", None),
    ],
)
def test_the_key_a_filter_pins(expr: str, key: str | None) -> None:
    assert pinned_key(expr, "subject_id") == key


def test_the_installed_lite_is_one_the_pruning_was_checked_against(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Restored after the test: the pruning patches Lite's class for the whole process.
    monkeypatch.setattr(Collection, "search", Collection.search)
    monkeypatch.setattr(Collection, "query", Collection.query)
    assert install_pruning(), f"milvus-lite {milvus_lite.__version__} runs unpruned"


def test_a_pinned_search_names_the_keys_partition_and_others_name_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[object] = []

    def recorded(  # noqa: PLR0917 - Lite's own signature
        self: object,
        query_vectors: list[list[float]],
        top_k: int = 10,
        metric_type: str | None = None,
        partition_names: list[str] | None = None,
        expr: str | None = None,
    ) -> list[object]:
        seen.append(partition_names)
        return []

    monkeypatch.setattr(Collection, "search", recorded)
    monkeypatch.setattr(Collection, "query", Collection.query)
    install_pruning()
    lite = SimpleNamespace(_partition_key_field="subject_id", _num_partition_buckets=16)

    Collection.search(lite, [[0.0]], expr='subject_id == "user-42"')
    Collection.search(lite, [[0.0]], 5, None, None, 'subject_id == "user-42"')
    Collection.search(lite, [[0.0]], expr='subject_id in ["user-42"]')
    Collection.search(lite, [[0.0]], expr='subject_id == "user-42"', partition_names=["_pk_3"])

    assert seen == [[bucket("user-42", 16)], [bucket("user-42", 16)], None, ["_pk_3"]]


@pytest.fixture(scope="module")
def lite_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server started with the stack's own command, on a port of its own."""
    uri = f"http://127.0.0.1:{free_port()}"
    workdir: Path = tmp_path_factory.mktemp("milvus")
    service = Milvus(address_of(uri), workdir, uri)
    log = (workdir / "server.log").open("wb")
    process = subprocess.Popen(service.command(), stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not service.healthy():
            assert process.poll() is None, (workdir / "server.log").read_text()
            assert time.monotonic() < deadline, "the Milvus Lite server did not answer"
            time.sleep(0.2)
        yield uri
    finally:
        process.terminate()
        process.wait(30)
        log.close()
    assert b"checked against" not in (workdir / "server.log").read_bytes()


@pytest.mark.milvus
def test_pruned_searches_and_counts_answer_as_unpruned_ones(lite_uri: str) -> None:
    client = MilvusClient(lite_uri, grpc_options=GRPC_OPTIONS)
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("fact_id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("subject_id", DataType.VARCHAR, max_length=64, is_partition_key=True)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=_DIMENSION)
    index = client.prepare_index_params()
    index.add_index("vector", index_type="FLAT", metric_type="COSINE")
    client.create_collection("facts", schema=schema, index_params=index)
    rng = np.random.default_rng(7)
    subjects = [f"user-{n}" for n in range(_SUBJECTS)]

    def rows(first: int, count: int) -> list[dict[str, object]]:
        vectors = rng.standard_normal((count, _DIMENSION)).astype(np.float32)
        return [
            {"fact_id": f"f{first + i}", "subject_id": subjects[i % _SUBJECTS], "vector": v}
            for i, v in enumerate(vectors.tolist())
        ]

    # Some rows in flushed segments, some still in the memtable: both are pruned.
    client.insert("facts", rows(0, 600))
    client.flush("facts")
    client.insert("facts", rows(600, 300))
    query = rng.standard_normal(_DIMENSION).astype(np.float32).tolist()
    try:
        for subject in subjects:
            pinned = of_subject(subject)  # pruned to the subject's partition
            listed = f'subject_id in ["{subject}"]'  # the same rows, every partition walked

            def hits(where: str) -> list[tuple[str, float]]:
                found = client.search(
                    "facts",
                    data=[query],
                    limit=10,
                    filter=where,
                    search_params={"metric_type": "COSINE"},
                    consistency_level=READ_CONSISTENCY,
                )
                return [(str(h["fact_id"]), round(float(h["distance"]), 5)) for h in found[0]]

            def count(where: str) -> int:
                got = client.query("facts", filter=where, output_fields=["count(*)"])
                return int(got[0]["count(*)"])

            assert hits(pinned) == hits(listed) != []
            assert count(pinned) == count(listed) == 900 // _SUBJECTS
    finally:
        client.close()
