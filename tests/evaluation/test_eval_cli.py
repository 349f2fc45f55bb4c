"""``slotwise eval`` on the test split, offline: CI holds the line of zero false supersessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from slotwise.streams.cli import app

ROOT = Path(__file__).parents[2]


def test_eval_on_the_test_split_writes_no_false_supersession(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLOTWISE_ANTHROPIC_API_KEY", raising=False)
    result = CliRunner().invoke(
        app,
        [
            "eval",
            str(ROOT / "datasets" / "slot_pairs.test.jsonl"),
            "--turns",
            str(ROOT / "datasets" / "turns.test.jsonl"),
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "results.json").read_text())
    assert document["false_supersessions"] == []
    assert document["pairs"] == 404
    rows = {r["mechanism"]: r for r in document["rows"]}
    assert rows["exact path (extraction, then key equality)"]["precision"] == 1.0
    assert {r["floor"] for r in document["rows"] if r["floor"] is not None} == {
        0.3,
        0.5,
        0.6,
        0.7,
        0.8,
        0.86,
        0.92,
    }
    assert (tmp_path / "pr.png").stat().st_size > 10_000
    assert "model re-ranker" in (tmp_path / "table.md").read_text()


def test_eval_reports_a_malformed_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "sp-1"}\n')
    result = CliRunner().invoke(app, ["eval", str(bad), "--out", str(tmp_path)])
    assert result.exit_code == 2


def test_eval_reports_deletion_intent_and_the_review_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLOTWISE_ANTHROPIC_API_KEY", raising=False)
    datasets = ROOT / "datasets"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            str(datasets / "slot_pairs.test.jsonl"),
            "--turns",
            str(datasets / "turns.test.jsonl"),
            "--deletion",
            str(datasets / "deletion.test.jsonl"),
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "deletion intent: recall" in result.output and "review noise" in result.output
    document = json.loads((tmp_path / "results.json").read_text())
    deletion, review = document["deletion"], document["review"]
    assert deletion["requests"] >= 40 + 14 + 10  # the set's, the pairs' and the turns'
    assert deletion["recall"] >= 0.95
    assert deletion["lookalike_erasures"] == 0
    assert review["changes"] > 0 and 0.0 <= review["caught_share"] <= 1.0
