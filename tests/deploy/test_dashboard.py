"""The Grafana dashboard: its shape offline, and its metric names against a live worker.

The live check starts a worker process against the local stack (as tests/e2e does), with
the fake Messages API as its model, feeds it the demo conversation, scrapes its
``/metrics`` and requires every metric the dashboard and the alert rules query to be one
the worker exports.
"""

from __future__ import annotations

import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from slotwise.loadtest.fake_anthropic import FakeAnthropic
from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.streams.config import Settings
from slotwise.streams.dev.demo import observations
from slotwise.topics.catalogue import Catalogue
from tests.deploy.manifests import (
    alert_rule_groups,
    as_prometheus,
    dashboard,
    dashboard_queries,
    metric_names,
    run_promtool,
)
from tests.e2e.harness import Pipeline, WorkerProcess, store_call

# The names a family's samples carry besides its own (prometheus_client's exposition).
_SAMPLE_SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("_sum", "_count", "_created"),
    "gauge": (),
}


def exported_names(exposition: str) -> set[str]:
    """Every name a query may select from this exposition: each family's and its samples'."""
    names = set()
    for family in text_string_to_metric_families(exposition):
        names.add(family.name)
        names |= {family.name + suffix for suffix in _SAMPLE_SUFFIXES.get(family.type, ())}
        names |= {sample.name for sample in family.samples}
    return names


def queried_names() -> set[str]:
    queries = [as_prometheus(q) for q in dashboard_queries(dashboard())]
    queries += [rule["expr"] for g in alert_rule_groups()["groups"] for rule in g["rules"]]
    return {name for query in queries for name in metric_names(query)}


# ------------------------------------------------------------------------------- offline


def test_every_panel_queries_the_chosen_prometheus() -> None:
    board = dashboard()
    assert [v["name"] for v in board["templating"]["list"]] == ["datasource"]
    panels = [p for p in board["panels"] if p["type"] != "row"]
    assert len({p["id"] for p in board["panels"]}) == len(board["panels"])
    for panel in panels:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        assert len({t["refId"] for t in panel["targets"]}) == len(panel["targets"])


def test_the_panels_do_not_overlap() -> None:
    taken: set[tuple[int, int]] = set()
    for panel in dashboard()["panels"]:
        box = panel["gridPos"]
        assert box["x"] + box["w"] <= 24, panel["title"]
        cells = {
            (x, y)
            for x in range(box["x"], box["x"] + box["w"])
            for y in range(box["y"], box["y"] + box["h"])
        }
        assert not cells & taken, panel["title"]
        taken |= cells


def test_the_dashboard_and_alerts_cover_what_operators_watch() -> None:
    names = queried_names()
    for needed in (
        "slotwise_committed_lag",
        "slotwise_deadletters_total",
        "slotwise_commit_failures_total",
        "slotwise_llm_errors_total",
        "slotwise_stage_seconds_bucket",
    ):
        assert needed in names


def test_promtool_parses_every_dashboard_query(tmp_path: Path) -> None:
    """Each query as a recording rule: `promtool check rules` parses its PromQL."""
    queries = [as_prometheus(q) for q in dashboard_queries(dashboard())]
    rules = [{"record": f"dashboard:query_{i}", "expr": q} for i, q in enumerate(queries)]
    path = tmp_path / "dashboard-queries.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    checked = run_promtool("check", "rules", path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_metric_names_are_read_from_promql() -> None:
    query = (
        'histogram_quantile(0.99, sum by (le, stage) (rate(a_seconds_bucket{stage!="x"}[5m])))'
        " / on (stage) group_left sum without (instance) (b_total offset 1h) > 1e3"
        ' and time() - max(c_timestamp) > 5 or vector(0) unless d{l="or e"}'
    )
    assert metric_names(query) == {"a_seconds_bucket", "b_total", "c_timestamp", "d"}


def test_exported_names_are_read_as_prometheus_exposes_them() -> None:
    registry = CollectorRegistry()
    Counter("x_events_total", "labelled, no sample yet", ["kind"], registry=registry)
    Histogram("x_stage_seconds", "one sample", registry=registry).observe(0.1)
    Gauge("x_lag", "unlabelled", registry=registry)
    names = exported_names(generate_latest(registry).decode())
    assert {"x_events_total", "x_stage_seconds_bucket", "x_stage_seconds_count", "x_lag"} <= names
    # A gauge has no _total, a histogram no _total, and what was never registered is absent.
    assert {"x_lag_total", "x_stage_seconds_total", "slotwise_committed_lag"}.isdisjoint(names)


# ---------------------------------------------------------------------------------- live


@pytest.fixture
def pipeline(stack: Settings, kafka_bootstrap: str, tmp_path: Path) -> Iterator[Pipeline]:
    catalogue = Catalogue(prefix=f"t{uuid.uuid4().hex[:8]}", partitions=3)
    ensure_topics(kafka_bootstrap, catalogue)
    made = Pipeline(stack, catalogue, tmp_path)
    try:
        yield made
    finally:
        made.stop_all()
        made.drop()


def _exposition(worker: WorkerProcess) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{worker.port}/metrics", timeout=10) as answer:
        text: str = answer.read().decode()
    return text


@pytest.mark.kafka
@pytest.mark.redis
@pytest.mark.milvus
def test_every_metric_queried_is_one_a_live_worker_exports(pipeline: Pipeline) -> None:
    subject = f"dash-{uuid.uuid4().hex[:6]}"
    turns = observations(subject)
    with FakeAnthropic() as model:
        pipeline.extra_env.update(
            {
                "SLOTWISE_ANTHROPIC_API_KEY": "test-key",
                "SLOTWISE_ANTHROPIC_BASE_URL": model.base_url,
                "SLOTWISE_LLM_TIMEOUT_S": "5",
            }
        )
        worker = pipeline.worker()
        worker.wait_healthy()
        pipeline.publish(pipeline.catalogue.observations, turns)
        last = turns[-1].observation_id
        assert store_call(pipeline, "wait_for_observation", subject, last, 120.0) is True
        exposition = _exposition(worker)

    exported = exported_names(exposition)
    missing = queried_names() - exported
    assert not missing, f"queried but not exported by the worker: {sorted(missing)}"
    # The feed reached the panels' main series: the check saw a working worker, not one
    # that had only registered its metrics.
    fed = {s.name for f in text_string_to_metric_families(exposition) for s in f.samples}
    assert {
        "slotwise_events_in_total",
        "slotwise_decisions_total",
        "slotwise_stage_seconds_bucket",
        "slotwise_commits_total",
        "slotwise_llm_calls_total",
        "slotwise_llm_request_seconds_count",
    } <= fed
