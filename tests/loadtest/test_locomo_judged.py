"""The LoCoMo replay's scorer on a tiny synthetic replay, and the replay through a worker."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from slotwise.loadtest.locomo_judged import (
    JudgedError,
    fact_key,
    load_judgements,
    load_replay,
    main,
    sample,
    score,
)
from slotwise.loadtest.locomo_worker import WrittenFact, replay
from slotwise.streams.config import Settings


def _fact(
    dia_id: str, text: str, attribute: str | None = None, value: str | None = None
) -> WrittenFact:
    return WrittenFact(
        "conv-1", "Ben", dia_id, attribute, value, text, "2023-05-08T13:56:00+00:00", "current"
    )


FACTS = [
    _fact("D1:2", "User works at Figma.", "employer", "Figma"),
    _fact("D1:2", "User likes climbing."),
    _fact("D2:1", "User moved to Porto.", "home_city", "Porto"),
    _fact("D2:4", "User adopted a cat and."),
    _fact("D3:1", "User's sister is a nurse."),
]


def _row(fact: WrittenFact, verdict: str) -> dict[str, object]:
    turn, attribute, key = fact_key(fact)
    return {"set": "fact", "turn": turn, "attribute": attribute, "key": key, "verdict": verdict,
            "reason": "synthetic"}  # fmt: skip


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_figures_count_verdicts_and_never_take_an_unjudged_fact_as_true(tmp_path: Path) -> None:
    judged = _write(
        tmp_path / "judged.jsonl",
        [
            _row(FACTS[0], "true"),
            _row(FACTS[1], "true"),
            _row(FACTS[2], "false"),
            _row(FACTS[3], "cut"),
            {"set": "self_statement", "turn": "conv-1:D1:2", "reason": "employer"},
            {"set": "self_statement", "turn": "conv-1:D2:1", "reason": "home"},
            {"set": "self_statement", "turn": "conv-1:D2:4", "reason": "pet"},
            {"set": "self_statement", "turn": "conv-1:D9:9", "reason": "nothing written"},
        ],
    )

    result = score(FACTS, load_judgements(judged), size=5)

    assert (result.sample, result.sample_judged, result.sample_true) == (5, 4, 2)
    assert (result.slotted, result.slotted_judged, result.slotted_true) == (2, 2, 1)
    assert (result.wrong_person, result.cut) == (0, 1)
    assert (result.statements, result.statements_any, result.statements_slotted) == (4, 3, 2)
    assert result.unjudged == (FACTS[4],)


def test_a_reworded_slotted_fact_keeps_its_verdict_but_another_value_does_not() -> None:
    reworded = _fact("D1:2", "User is employed at Figma.", "employer", "figma")
    other = _fact("D1:2", "User works at Figma.", "employer", "Canva")

    assert fact_key(reworded) == fact_key(FACTS[0])
    assert fact_key(other) != fact_key(FACTS[0])


def test_the_sample_is_the_same_whatever_order_the_replay_wrote() -> None:
    assert sample(FACTS, 3, seed=1) == sample(list(reversed(FACTS)), 3, seed=1)


def test_the_command_reads_a_dump_and_prints_the_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "replay.jsonl"
    dump.write_text("".join(json.dumps(asdict(f)) + "\n" for f in FACTS))
    judged = _write(tmp_path / "judged.jsonl", [_row(f, "wrong_person") for f in FACTS])

    main([str(dump), "--judged", str(judged), "--size", "5"])

    out = capsys.readouterr().out
    assert load_replay(dump) == FACTS
    assert "sample precision 0.00 (0/5 judged of 5)" in out
    assert "wrong person 5" in out


def test_a_fact_row_without_a_verdict_is_refused(tmp_path: Path) -> None:
    bad = _write(tmp_path / "judged.jsonl", [{"set": "fact", "turn": "conv-1:D1:1", "key": "x"}])

    with pytest.raises(JudgedError):
        load_judgements(bad)


CORPUS = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben! How are you?"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "I work at Figma now."},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "I'm vegetarian."},
            ],
        },
    }
]


@pytest.mark.kafka
@pytest.mark.redis
@pytest.mark.milvus
def test_every_turn_goes_through_a_worker_and_each_fact_names_its_speaker_and_turn(
    stack: Settings, tmp_path: Path
) -> None:
    corpus = tmp_path / "locomo.json"
    corpus.write_text(json.dumps(CORPUS))

    turns, written = replay(stack.model_copy(update={"llm": "offline"}), corpus)

    assert turns == 3
    where = {(w.speaker, w.dia_id, w.attribute) for w in written}
    assert ("Ben", "D1:2", "employer") in where
    assert ("Ana", "D1:3", "diet") in where
    assert all(w.conversation == "conv-1" for w in written)
