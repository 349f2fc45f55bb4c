"""The alert rules: promtool checks them and runs their unit tests (alerts.test.yaml).

The rules are the PrometheusRule's ``spec``, written out as the rule file plain Prometheus
would load; promtool is built by `make setup` from the Prometheus module (``go install``).
"""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.manifests import alert_rule_groups, documents, run_promtool

UNIT_TESTS = Path(__file__).with_name("alerts.test.yaml")
SEVERITIES = {"info", "warning", "critical"}
_DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")


def _rules(groups: dict[str, Any]) -> list[dict[str, Any]]:
    return [rule for group in groups["groups"] for rule in group["rules"]]


def _written(groups: dict[str, Any], folder: Path) -> Path:
    path = folder / "rules.yaml"
    path.write_text(yaml.safe_dump(groups, sort_keys=False))
    return path


def test_promtool_accepts_the_rules(tmp_path: Path) -> None:
    checked = run_promtool("check", "rules", _written(alert_rule_groups(), tmp_path))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(_rules(alert_rule_groups()))} rules found" in checked.stdout


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("expr", "sum by (topic (slotwise_committed_lag) > 5000"),
        ("expr", "slotwise_deadletters_total[10m] > 0"),
        ("for", "15 minutes"),
        ("annotations", {"summary": "{{ $labels.topic "}),
    ],
)
def test_promtool_refuses_a_broken_rule(tmp_path: Path, field: str, value: object) -> None:
    broken = copy.deepcopy(alert_rule_groups())
    broken["groups"][0]["rules"][0][field] = value
    checked = run_promtool("check", "rules", _written(broken, tmp_path))
    assert checked.returncode != 0, checked.stdout


def _unit_test_folder(tmp_path: Path, groups: dict[str, Any]) -> Path:
    """alerts.test.yaml beside the rules, their annotations dropped: promtool compares an
    alert's annotations too, and the tests are about when an alert fires and its labels
    (`promtool check rules` parses the annotations' templates)."""
    bare = copy.deepcopy(groups)
    for rule in _rules(bare):
        rule.pop("annotations", None)
    _written(bare, tmp_path)
    return Path(shutil.copy(UNIT_TESTS, tmp_path / UNIT_TESTS.name))


def test_every_alert_fires_and_stays_quiet_as_its_unit_tests_say(tmp_path: Path) -> None:
    tested = run_promtool("test", "rules", _unit_test_folder(tmp_path, alert_rule_groups()))
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


@pytest.mark.parametrize(
    ("alert", "old", "new"),
    [
        # Lag counted once per replica reporting a partition, not once per partition.
        ("SlotwiseConsumerLagHigh", "max by (topic, partition)", "sum by (topic, partition)"),
        # Without it the backlog alert never fires before the first review is resolved.
        ("SlotwiseReviewBacklogGrowing", " or vector(0)", ""),
        ("SlotwiseCommitsStalled", "> 300", "> 3000"),
    ],
)
def test_the_unit_tests_fail_when_an_alert_changes(
    tmp_path: Path, alert: str, old: str, new: str
) -> None:
    changed = copy.deepcopy(alert_rule_groups())
    (rule,) = [r for r in _rules(changed) if r.get("alert") == alert]
    assert old in rule["expr"]
    rule["expr"] = rule["expr"].replace(old, new)
    tested = run_promtool("test", "rules", _unit_test_folder(tmp_path, changed))
    assert tested.returncode != 0, tested.stdout


def test_every_alert_has_a_unit_test_where_it_fires() -> None:
    (unit_tests,) = documents(UNIT_TESTS)
    firing = {
        case["alertname"]
        for test in unit_tests["tests"]
        for case in test.get("alert_rule_test", [])
        if case["exp_alerts"]
    }
    alerts = {rule["alert"] for rule in _rules(alert_rule_groups())}
    assert alerts - firing == set()


def test_every_alert_says_how_bad_and_what_to_do() -> None:
    rules = _rules(alert_rule_groups())
    assert rules
    for rule in rules:
        assert re.fullmatch(r"Slotwise[A-Z][A-Za-z]+", rule["alert"]), rule
        assert rule["labels"]["severity"] in SEVERITIES, rule["alert"]
        assert {"summary", "description"} <= rule["annotations"].keys(), rule["alert"]
        assert _DURATION.match(rule.get("for", "0s")), rule["alert"]
