from __future__ import annotations

import json
import math
from pathlib import Path

from rich.console import Console

from slotwise.loadtest.results import Figure, percentile, print_summary, write_result


def test_result_file_keeps_numbers_and_the_machine(tmp_path: Path) -> None:
    figures = [Figure("throughput", 123.4, "writes/s"), Figure("runs", "1, 2", "records/s")]
    path = write_result(tmp_path / "out" / "r.json", "nominal", figures, config={"rate": 5.0})
    document = json.loads(path.read_text())
    assert document["scenario"] == "nominal"
    assert document["figures"]["throughput"] == {"value": 123.4, "unit": "writes/s"}
    assert document["config"] == {"rate": 5.0}
    assert document["environment"]["cpus"] >= 1 and document["environment"]["librdkafka"]


def test_summary_table_shows_every_figure() -> None:
    console = Console(record=True, width=100)
    print_summary("t", [Figure("a", 1_234_567, "x"), Figure("b", None), Figure("c", 0.5)], console)
    text = console.export_text()
    assert "1,234,567" in text and "—" in text and "0.500" in text


def test_percentile_interpolates() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 99) == 5.0
    assert math.isnan(percentile([], 50))
