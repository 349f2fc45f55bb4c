"""``python -m slotwise.loadtest.milvus_search`` at a tiny size against the real Milvus Lite."""

from __future__ import annotations

import pytest
from pymilvus import MilvusClient

from slotwise.loadtest.milvus_search import main, measure
from slotwise.sinks.milvus.collections import GRPC_OPTIONS

pytestmark = pytest.mark.milvus


def _bench_collections(uri: str) -> list[str]:
    client = MilvusClient(uri=uri, grpc_options=GRPC_OPTIONS)
    try:
        return sorted(c for c in client.list_collections() if c.endswith("_search"))
    finally:
        client.close()


def test_an_exact_index_finds_every_subjects_true_neighbours(milvus_uri: str) -> None:
    before = _bench_collections(milvus_uri)
    points = measure(
        milvus_uri,
        rows=1200,
        subjects=100,
        checkpoints=[400],
        searches=40,
        k=5,
        index="FLAT",
        isolation=False,
    )
    assert [p.rows for p in points] == [400, 1200]
    assert all(p.recall == 1.0 and p.empty == 0.0 for p in points)
    assert all(0 < p.p50_ms <= p.p99_ms for p in points)
    assert _bench_collections(milvus_uri) == before


def test_the_command_prints_one_line_per_checkpoint(
    milvus_uri: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--uri", milvus_uri, "--rows", "300", "--subjects", "30", "--checkpoints", "100",
            "--searches", "10", "--index", "HNSW", "--isolation"]  # fmt: skip
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["HNSW + partitionkey.isolation"] * 2
    assert all("recall" in line and "empty" in line for line in lines)
