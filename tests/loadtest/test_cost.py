"""The benchmarks' cost figures from usage counters, and the ``locomo`` scenario end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from slotwise.loadtest.__main__ import main
from slotwise.loadtest.cost import cost_figures
from slotwise.models.pricing import Prices
from slotwise.streams.config import Settings

COST = (
    "model calls per observation",
    "input tokens per observation",
    "cached input tokens per observation",
    "uncached input tokens per observation",
    "output tokens per observation",
    "cached input share",
    "model cost per 1,000 observations",
)


def sample(name: str, value: float, **labels: str) -> tuple[str, float]:
    shown = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{name}{{{shown}}}", value


def test_cost_figures_per_observation() -> None:
    metrics = dict(
        [
            sample("slotwise_model_calls_total", 8, kind="extract"),
            sample("slotwise_model_calls_total", 2, kind="slot_match"),
            sample("slotwise_model_tokens_total", 1_000, kind="extract", direction="input"),
            sample("slotwise_model_tokens_total", 4_000, kind="extract", direction="cache_write"),
            sample("slotwise_model_tokens_total", 36_000, kind="extract", direction="cache_read"),
            sample("slotwise_model_tokens_total", 500, kind="extract", direction="output"),
            sample("slotwise_model_tokens_total", 200, kind="slot_match", direction="input"),
            sample("slotwise_model_tokens_total", 8_800, kind="slot_match", direction="cache_read"),
            sample("slotwise_model_tokens_total", 20, kind="slot_match", direction="output"),
            sample("slotwise_llm_tokens_total", 99_999, purpose="extract", kind="input"),
        ]
    )
    prices = Prices(input=1.0, output=5.0, cache_read=0.1, cache_write=1.25)

    figures = {f.name: f.value for f in cost_figures(metrics, 10, prices)}

    assert figures["model calls per observation"] == 1.0
    assert figures["model calls per observation: extract"] == 0.8
    assert figures["model calls per observation: slot_match"] == 0.2
    assert figures["input tokens per observation"] == 5_000.0
    assert figures["cached input tokens per observation"] == 4_480.0
    assert figures["uncached input tokens per observation"] == 520.0
    assert figures["output tokens per observation"] == 52.0
    assert figures["cached input share"] == pytest.approx(44_800 / 50_000)
    dollars = (1_200 * 1.0 + 520 * 5.0 + 44_800 * 0.1 + 4_000 * 1.25) / 1e6
    assert figures["model cost per 1,000 observations"] == pytest.approx(dollars / 10 * 1000)


def test_no_observations_no_figures() -> None:
    assert cost_figures({}, 0, Prices(1, 1, 1, 1)) == []


SMALL_CORPUS = [
    {
        "sample_id": "conv-t",
        "qa": [],
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben! How are you?"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Hey Ana, I work at Figma now."},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "I moved to Lisbon last month."},
                {"speaker": "Ben", "dia_id": "D1:4", "text": "Nice! Thanks for telling me."},
                {"speaker": "Ana", "dia_id": "D1:5", "text": "I'm allergic to peanuts."},
                {"speaker": "Ben", "dia_id": "D1:6", "text": "Good to know, haha."},
            ],
            # Months later: the store's watermark index keeps no turn of the first session
            # by then, and the run must still see every turn applied.
            "session_2_date_time": "10:00 am on 20 September, 2023",
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": "I switched to the annual plan."},
                {"speaker": "Ben", "dia_id": "D2:2", "text": "I live in Porto these days."},
            ],
        },
    }
]


@pytest.mark.kafka
@pytest.mark.redis
@pytest.mark.milvus
def test_locomo_scenario_reports_the_models_cost(
    stack: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "locomo.json"
    corpus.write_text(json.dumps(SMALL_CORPUS))
    monkeypatch.setenv("SLOTWISE_LOCOMO_PATH", str(corpus))
    argv = ["locomo", "--runs", "1", "--count", "32", "--latency-ms", "20", "--deadline",
            "120", "--json-dir", str(tmp_path), "--workdir", str(tmp_path)]  # fmt: skip

    assert main(argv) == 0

    document = json.loads((tmp_path / "locomo.json").read_text())
    figures = document["figures"]
    assert figures["observations"]["value"] == 32
    assert figures["subjects"]["value"] == 8  # two speakers, replayed four times
    for name in COST:
        value = figures[name]["value"]
        assert isinstance(value, int | float) and not math.isnan(value), (name, value)
    assert figures["model cost per 1,000 observations"]["value"] > 0
    assert document["config"]["prices_usd_per_million_tokens"]["input"] == 1.0
