"""Every scenario of ``python -m slotwise.loadtest`` at a tiny size against the real stack.

These check the mechanics (processes start and stop, progress is followed,
everything is cleaned up) and the shape of the JSON result, never timings.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import redis
from confluent_kafka.admin import AdminClient
from pymilvus import MilvusClient

from slotwise.loadtest.__main__ import main
from slotwise.loadtest.mem0_peer import mem0_installed
from slotwise.sinks.milvus.index import GRPC_OPTIONS
from slotwise.streams.config import Settings

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

TINY = {
    # Two workers: the replicas of one group share the partitions and their figures add up.
    "exact": ["--count", "300", "--subjects", "20", "--baseline-records", "300", "--workers", "2"],
    "cascade": ["--count", "60", "--subjects", "10", "--latency-ms", "20"],
    "nominal": ["--duration", "2", "--subjects", "5", "--latency-ms", "20"],
    "burst": ["--duration", "1", "--subjects", "10", "--latency-ms", "20"],
    "soak": ["--count", "600", "--subjects", "20"],
}
DECISIONS = ("add", "supersede", "update", "noop", "review")
MEM0 = ["--count", "30", "--subjects", "3", "--latency-ms", "20"]
EXPECTED = {
    "exact": ["sustained throughput", "workers", "baseline (transactional)",
              "slotwise / baseline (transactional)", "worker CPU per candidate"],
    "cascade": ["sustained throughput", "LLM calls per observation: extract",
                "LLM calls per observation", "model calls per observation",
                "input tokens per observation", "output tokens per observation",
                "cached input share", "model cost per 1,000 observations"],
    "nominal": ["produce → applied p99", "produce → supersession p50", "achieved rate"],
    "burst": ["produce → applied p50", "produce → applied missing"],
    "soak": ["worker RSS at end", "RSS slope, second half", "Milvus search p99 at start",
             "Milvus search p99 at end"],
}  # fmt: skip


def _leftovers(settings: Settings) -> tuple[list[str], list[bytes], list[str]]:
    topics = AdminClient({"bootstrap.servers": settings.kafka_bootstrap}).list_topics(timeout=10)
    client = redis.Redis.from_url(settings.redis_url)
    milvus = MilvusClient(uri=settings.milvus_uri, grpc_options=GRPC_OPTIONS)
    try:
        return (
            sorted(t for t in topics.topics if t.startswith("bench-")),
            sorted(client.scan_iter(match="bench*", count=1000)),
            sorted(c for c in milvus.list_collections() if c.startswith("bench")),
        )
    finally:
        client.close()
        milvus.close()


def _left_behind(settings: Settings, before: tuple[list[Any], ...]) -> tuple[list[Any], ...]:
    """What a run made and did not remove. What was there before may be gone since: an
    earlier run's topics can still be listed while Kafka deletes them."""
    now = _leftovers(settings)
    return tuple(sorted(set(a) - set(b)) for a, b in zip(now, before, strict=True))


@pytest.mark.parametrize("scenario", list(TINY))
def test_scenario_runs_and_writes_its_result(
    stack: Settings, tmp_path: Path, scenario: str
) -> None:
    before = _leftovers(stack)
    argv = [scenario, "--runs", "1", "--deadline", "120", "--json-dir", str(tmp_path),
            "--workdir", str(tmp_path)]  # fmt: skip
    assert main([*argv, *TINY[scenario]]) == 0

    document = json.loads((tmp_path / f"{scenario}.json").read_text())
    assert document["scenario"] == scenario
    assert document["environment"]["cpus"] >= 1
    figures = document["figures"]
    for name in EXPECTED[scenario]:
        value = figures[name]["value"]
        assert isinstance(value, int | float) and not math.isnan(value), (name, value)
    [run] = document["details"]["runs"]
    assert set(run["figures"]) == set(figures)
    if scenario == "exact":
        assert figures["workers"]["value"] == 2
        assert sum(figures[f"decisions: {d}"]["value"] for d in DECISIONS) == pytest.approx(1.0)
    spread = document["details"]["spread"][EXPECTED[scenario][0]]
    assert spread["min"] <= spread["median"] <= spread["max"]
    assert _left_behind(stack, before) == ([], [], []), (
        "a run left topics, Redis keys or collections behind"
    )


def test_peer_scenario_reports_mem0_or_says_it_is_missing(stack: Settings, tmp_path: Path) -> None:
    before = _leftovers(stack)
    argv = ["mem0", "--runs", "1", "--deadline", "120", "--json-dir", str(tmp_path),
            "--workdir", str(tmp_path)]  # fmt: skip
    assert main([*argv, *MEM0]) == 0
    assert _left_behind(stack, before) == ([], [], [])
    figures = json.loads((tmp_path / "mem0.json").read_text())["figures"]
    assert figures["slotwise slots with 2+ current values"]["value"] == 0
    assert figures["slotwise single-valued slots with 2+ current facts"]["value"] == 0
    if mem0_installed():
        assert figures["mem0 writes/s"]["value"] > 0
        assert figures["mem0 failed writes"]["value"] == 0
        assert figures["slotwise / mem0 writes/s"]["value"] > 0
    else:
        assert figures["mem0"]["value"].startswith("not installed")


def test_profiling_without_py_spy_is_refused_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without py-spy
    assert main(["exact", "--profile-dir", str(tmp_path / "profiles")]) == 2
    assert "pip install py-spy" in capsys.readouterr().out
    assert not (tmp_path / "profiles").exists()
