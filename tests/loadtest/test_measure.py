"""Pure parts of the benchmarks: rates, latencies, spreads, the fake model's answers, profiles."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
import urllib.request

import pytest

from slotwise.loadtest import model_calls, responders
from slotwise.loadtest.fake_anthropic import Delay, FakeAnthropic, ToolUse
from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.loadtest.measure import latencies, overall_rate, slope, summarize_runs, sustained_rate
from slotwise.loadtest.profiles import read_collapsed
from slotwise.loadtest.responders import bench
from slotwise.loadtest.results import Figure
from slotwise.models.extractor import _render
from slotwise.processors.model import Neighbour
from slotwise.processors.rules import gazetteer
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import render_question
from slotwise.topics.records import CandidateFact, Fact

SCHEMA = AttributeSchema.load()


def test_sustained_rate_leaves_out_start_up_and_tail() -> None:
    # Nothing for 10 s (group join), then 100 records/s, then a slow last commit.
    samples = [(0.0, 0), (10.0, 0), *((10.0 + s, 100 * s) for s in range(1, 11)), (20.0, 1_000)]
    samples.append((30.0, 1_000))
    assert sustained_rate(samples, 1_000) == pytest.approx(100.0)
    assert overall_rate(samples, 1_000) == pytest.approx(100.0)
    assert math.isnan(sustained_rate([(0.0, 0), (1.0, 10)], 1_000))


def test_overall_rate_counts_from_the_sample_before_the_first_progress() -> None:
    samples = [(0.0, 0), (5.0, 0), (6.0, 500), (10.0, 1_000)]
    assert overall_rate(samples, 1_000) == pytest.approx(1_000 / 5.0)


def test_latencies_are_measured_over_what_was_seen_and_count_the_rest_missing() -> None:
    produced = {f"o{i}": float(i) for i in range(100)}
    seen = {f"o{i}": i + 0.01 * (i + 1) for i in range(99)}
    found = latencies(produced, seen)
    assert (found.count, found.missing) == (99, 1)
    assert found.p50 == pytest.approx(0.5)
    assert found.max == pytest.approx(0.99)
    assert found.p50 <= found.p95 <= found.p99 <= found.max


def test_slope_is_least_squares() -> None:
    assert slope([(0, 100.0), (10, 110.0), (20, 120.0)]) == pytest.approx(1.0)
    assert math.isnan(slope([(0, 1.0)]))


def test_runs_summarize_to_median_and_range_in_first_seen_order() -> None:
    runs = [
        [Figure("rate", 10.0, "r/s"), Figure("note", "x")],
        [Figure("rate", 30.0, "r/s"), Figure("note", "x")],
        [Figure("rate", 20.0, "r/s"), Figure("extra", 1)],
    ]
    rate, note, extra = summarize_runs(runs)
    assert (rate.name, rate.median, rate.low, rate.high) == ("rate", 20.0, 10.0, 30.0)
    assert rate.shown() == ("20.000", "10.000 - 30.000")
    assert note.median is None and note.shown() == ("x", "")
    assert extra.values == (None, None, 1)


def _request(tool: str, content: str) -> dict[str, object]:
    return {"tool_choice": {"type": "tool", "name": tool},
            "messages": [{"role": "user", "content": content}]}  # fmt: skip


def test_the_fake_model_extracts_what_the_rules_extractor_reads() -> None:
    writes = list(generate(WorkloadConfig(subjects=5, count=60, seed=7), SCHEMA))
    for write in writes:
        reply = bench(_request("record_facts", _render(write.observation())))
        assert isinstance(reply, ToolUse)
        facts = reply.input["facts"]
        assert facts, write.statement
        if write.kind == "free_text":
            assert facts[0]["attribute"] is None
        else:
            assert (facts[0]["attribute"], facts[0]["value"]) == (write.attribute, write.value)


def test_the_fake_model_answers_an_erase_request_with_the_erase_and_no_facts() -> None:
    write = next(generate(WorkloadConfig(subjects=1, count=1), SCHEMA))
    forget = write.observation().model_copy(update={"text": "Delete everything you know about me."})
    reply = bench(_request("record_facts", _render(forget)))
    assert isinstance(reply, ToolUse)
    assert reply.input == {
        "facts": [],
        "erase": [{"attribute": None, "everything": True, "quote": forget.text}],
    }


def test_a_stopping_fake_model_cuts_a_scripted_delay_short() -> None:
    fake = FakeAnthropic(latency_s=0).start()
    fake.script(Delay(60.0, then=ToolUse({"memory": 1})))
    request = urllib.request.Request(
        f"{fake.base_url}/v1/messages",
        data=json.dumps({"model": "m", "max_tokens": 8, "messages": []}).encode(),
        headers={"x-api-key": "k", "content-type": "application/json"},
    )
    caller = threading.Thread(target=_ignoring_errors, args=(request,), daemon=True)
    try:
        caller.start()
        deadline = time.monotonic() + 10
        while fake.pending and time.monotonic() < deadline:
            time.sleep(0.01)  # until the request is in its delay
    finally:
        fake.stop()
    caller.join(timeout=10)
    assert not caller.is_alive(), "the delayed request still waits after the server stopped"


def _ignoring_errors(request: urllib.request.Request) -> None:
    try:
        urllib.request.urlopen(request, timeout=30).read()
    except OSError:
        pass


def _fact(text: str) -> Fact:
    write = next(generate(WorkloadConfig(subjects=1, count=1), SCHEMA))
    return Fact(
        fact_id=f"f-{abs(hash(text))}", subject_id=write.subject_id, attribute=None, value=None,
        text=text, category="travel", status="current", valid_from=write.observed_at,
        observed_at=write.observed_at, recorded_at=write.observed_at, source="chat",
        confidence=0.9, importance=0.4, candidate_id="c",
    )  # fmt: skip


def test_the_fake_model_matches_a_restated_fact_and_nothing_else() -> None:
    write = next(generate(WorkloadConfig(subjects=1, count=1), SCHEMA))
    candidate = CandidateFact(
        candidate_id="c1", subject_id=write.subject_id, attribute=None, value=None,
        text="User visited Kyoto in March.", observed_at=write.observed_at,
    )  # fmt: skip
    others = [Neighbour(_fact("User visited Hanoi in May."), 0.8)]
    same = [*others, Neighbour(_fact("User visited Kyoto in March."), 0.99)]
    assert bench(_request("answer_slot", render_question(candidate, same))) == ToolUse(
        {"memory": 2}
    )
    assert bench(_request("answer_slot", render_question(candidate, others))) == ToolUse(
        {"memory": "NONE"}
    )


def test_collapsed_stacks_give_own_and_total_shares() -> None:
    profile = read_collapsed([
        "main (app.py:1);work (app.py:5);redis (r.py:9) 30",
        "main (app.py:1);work (app.py:6) 10",
        "not a stack line",
    ])  # fmt: skip
    assert profile.samples == 40
    assert profile.top(1) == [("redis (r.py)", 0.75)]
    assert dict(profile.top(3, by="total"))["work (app.py)"] == 1.0


def test_the_bench_model_loads_the_rules_tables_before_it_serves() -> None:
    # Loaded on first use instead, each of a run's first few hundred request threads built
    # its own copy at once, and the worker's calls timed out behind them.
    tables = [
        gazetteer._cities,
        gazetteer._countries,
        gazetteer._regions,
        gazetteer._languages,
        gazetteer._zones,
    ]
    for table in tables:
        table.cache_clear()
    responders.warm()
    assert [table.cache_info().currsize for table in tables] == [1] * len(tables)


def test_the_model_call_bench_times_both_request_paths_on_the_canned_reply() -> None:
    runs = asyncio.run(model_calls.measure(calls=20, rounds=2))
    assert set(runs) == {"plain SDK", "ModelClient"}
    assert all(len(figures) == 2 and min(figures) > 0 for figures in runs.values())
