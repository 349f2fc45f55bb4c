from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from slotwise.loadtest.locomo import (
    LOCOMO_ENV,
    CorpusError,
    default_path,
    observations,
    read_turns,
)
from slotwise.topics.codec import decode_record, encode_record


def _corpus(tmp_path: Path, conversation: dict[str, object]) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "conv-1", "qa": [], "conversation": conversation}]))
    return path


SMALL: dict[str, object] = {
    "speaker_a": "Ana",
    "speaker_b": "Ben",
    "session_2_date_time": "9:05 am on 3 June, 2023",
    "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "I moved to Porto."}],
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben!"},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Hey Ana, I work at Figma."},
        {"speaker": "Ana", "dia_id": "D1:3", "text": "Look!", "blip_caption": "a photo of a dog"},
    ],
    "session_3_date_time": "10:00 am on 1 July, 2023",
}


def test_turns_follow_session_numbers_with_dated_instants(tmp_path: Path) -> None:
    turns = read_turns(_corpus(tmp_path, SMALL))
    assert [t.dia_id for t in turns] == ["D1:1", "D1:2", "D1:3", "D2:1"]
    assert turns[0].said_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert turns[1].said_at == datetime(2023, 5, 8, 13, 56, 30, tzinfo=UTC)
    assert turns[3].said_at == datetime(2023, 6, 3, 9, 5, tzinfo=UTC)


def test_each_speaker_replica_is_a_subject_with_its_own_turns_in_order(tmp_path: Path) -> None:
    replayed = list(observations(read_turns(_corpus(tmp_path, SMALL)), replicas=3))
    assert len(replayed) == 12
    by_subject: dict[str, list[str]] = {}
    for observation in replayed:
        by_subject.setdefault(observation.subject_id, []).append(observation.text)
    assert set(by_subject) == {f"conv-1-{s}-{r}" for s in ("Ana", "Ben") for r in range(3)}
    assert by_subject["conv-1-Ben-2"] == ["Hey Ana, I work at Figma.", "I moved to Porto."]
    assert len({o.observation_id for o in replayed}) == 12
    # round robin: the first turns of every replica come before any second turn
    assert [o.subject_id for o in replayed[:3]] == [f"conv-1-Ana-{r}" for r in range(3)]


def test_a_malformed_corpus_is_refused_with_the_reason(tmp_path: Path) -> None:
    undated: dict[str, object] = {"session_1": [{"speaker": "Ana", "text": "hi"}]}
    with pytest.raises(CorpusError, match="no date"):
        read_turns(_corpus(tmp_path, undated))
    with pytest.raises(CorpusError, match="no LoCoMo file"):
        read_turns(tmp_path / "missing.json")


def test_the_path_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCOMO_ENV, "/somewhere/locomo10.json")
    assert default_path() == Path("/somewhere/locomo10.json")
    monkeypatch.delenv(LOCOMO_ENV)
    assert default_path().parts[-4:] == ("shared", "data", "locomo", "locomo10.json")


def test_the_shared_corpus_replays_every_turn() -> None:
    turns = read_turns()
    assert len(turns) == 5882
    assert len({t.conversation for t in turns}) == 10
    first = next(observations(turns, replicas=2))
    assert first.subject_id == "conv-26-Caroline-0"
    assert first.observed_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert decode_record(encode_record(first)) == first
    per_subject: dict[str, datetime] = {}
    for observation in observations(turns, replicas=2):
        previous = per_subject.get(observation.subject_id)
        assert previous is None or observation.observed_at > previous
        per_subject[observation.subject_id] = observation.observed_at
    assert len(per_subject) == 40
