"""``slotwise eval --end-to-end`` on 20 labelled pairs: real topics, a worker process, Redis.

What the worker decides must be what the in-process stages decide: both runs are
scored, and their decisions compared pair by pair.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from slotwise.streams.cli import app
from slotwise.streams.config import Settings

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus, pytest.mark.slow]

ROOT = Path(__file__).parents[2]


def _decisions(folder: Path) -> dict[str, str]:
    document = json.loads((folder / "results.json").read_text())
    wrong = {d["pair_id"]: d["got"] for d in document["disagreements"]}
    return {"correct": str(document["correct"]), **wrong}


def test_end_to_end_decides_as_the_stages_do(
    stack: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLOTWISE_ANTHROPIC_API_KEY", raising=False)
    lines = (ROOT / "datasets" / "slot_pairs.test.jsonl").read_text().splitlines()
    # The first 20: direct and indirect changes, so supersessions travel the real topics.
    subset = tmp_path / "pairs.jsonl"
    subset.write_text("\n".join(lines[:20]) + "\n")
    runner = CliRunner()
    offline = runner.invoke(app, ["eval", str(subset), "--out", str(tmp_path / "offline")])
    assert offline.exit_code == 0, offline.output
    e2e = runner.invoke(app, ["eval", str(subset), "--out", str(tmp_path / "e2e"), "--end-to-end"])
    assert e2e.exit_code == 0, e2e.output
    document = json.loads((tmp_path / "e2e" / "results.json").read_text())
    assert document["mode"] == "end to end" and document["false_supersessions"] == []
    assert document["decisions"].get("SUPERSEDE", 0) > 0
    assert _decisions(tmp_path / "e2e") == _decisions(tmp_path / "offline")
