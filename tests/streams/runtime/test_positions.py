"""Start offsets and pause state of assigned partitions (``streams/runtime/positions.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from slotwise.streams.runtime import positions
from slotwise.streams.runtime.errors import ConsumerFailed
from slotwise.streams.runtime.positions import Pauses, committed_offsets, start_offsets

CAND, OBS = "p.candidates.v1", "p.observations.v1"


class _Consumer:
    """The consumer calls positions.py makes, answering from scripts."""

    def __init__(
        self,
        committed: list[object] | None = None,
        watermarks: dict[tuple[str, int], list[object]] | None = None,
        owned: tuple[tuple[str, int], ...] = (),
    ) -> None:
        self._committed: Iterator[object] = iter(committed or [])
        self._watermarks = {tp: iter(answers) for tp, answers in (watermarks or {}).items()}
        self.owned = [TopicPartition(t, p) for t, p in owned]
        self.paused: set[tuple[str, int]] = set()  # librdkafka's flag, kept across revokes
        self.resumed: list[tuple[str, int]] = []

    def committed(self, partitions: list[TopicPartition], timeout: float) -> Any:
        answer = next(self._committed)
        if isinstance(answer, KafkaError):
            raise KafkaException(answer)
        return answer

    def get_watermark_offsets(self, tp: TopicPartition, timeout: float, cached: bool) -> Any:
        answer = next(self._watermarks[(tp.topic, tp.partition)])
        if isinstance(answer, KafkaError):
            raise KafkaException(answer)
        return answer

    def assignment(self) -> list[TopicPartition]:
        return list(self.owned)

    def pause(self, partitions: list[TopicPartition]) -> None:
        self.paused |= {(tp.topic, tp.partition) for tp in partitions}

    def resume(self, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            assert (tp.topic, tp.partition) in self.paused, f"{tp} resumed, never paused"
            self.paused.discard((tp.topic, tp.partition))
            self.resumed.append((tp.topic, tp.partition))


def _consumer(fake: _Consumer) -> Consumer:
    return cast(Consumer, fake)


@pytest.fixture(autouse=True)
def _no_sleeping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(positions.time, "sleep", lambda _: None)


def test_committed_offsets_wait_out_an_open_transaction() -> None:
    # What reading them answers while a killed worker's transaction holds them.
    held = KafkaError(KafkaError._TIMED_OUT, "Failed to get committed offsets")
    fake = _Consumer(committed=[held, held, [TopicPartition(CAND, 0, 41), TopicPartition(CAND, 1)]])
    wanted = [TopicPartition(CAND, 0), TopicPartition(CAND, 1)]
    assert committed_offsets(_consumer(fake), wanted) == {(CAND, 0): 41, (CAND, 1): -1001}


def test_committed_offsets_fail_the_consumer_on_an_error_that_does_not_pass() -> None:
    fake = _Consumer(committed=[KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED)])
    with pytest.raises(ConsumerFailed, match="committed offsets"):
        committed_offsets(_consumer(fake), [TopicPartition(CAND, 0)])


def test_committed_offsets_give_up_after_their_wait() -> None:
    held = KafkaError(KafkaError._TIMED_OUT)
    fake = _Consumer(committed=[held] * 3)
    with pytest.raises(ConsumerFailed, match="could not read"):
        committed_offsets(_consumer(fake), [TopicPartition(CAND, 0)], wait_s=0)


def test_a_partition_never_committed_starts_at_its_first_offset_not_a_logical_one() -> None:
    # Retention removed the log's first 120 offsets; the first read times out.
    fake = _Consumer(watermarks={(OBS, 2): [KafkaError(KafkaError._TIMED_OUT), (120, 900)]})
    starts = start_offsets(_consumer(fake), {(CAND, 0): 41, (OBS, 2): -1001})
    assert starts == {(CAND, 0): 41, (OBS, 2): 120}


def test_a_partition_a_restarted_broker_has_not_loaded_yet_is_waited_for() -> None:
    # What a partition answers in the first moments after its broker came back.
    unloaded = [
        KafkaError(KafkaError._UNKNOWN_PARTITION, "Failed to get watermark offsets"),
        KafkaError(KafkaError.LEADER_NOT_AVAILABLE),
        KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION),
        # The lookup was out to the broker as it restarted: its handle was replaced.
        KafkaError(KafkaError._DESTROY_BROKER, "Broker handle destroyed without termination"),
    ]
    fake = _Consumer(watermarks={(OBS, 0): [*unloaded, (0, 0)]})
    assert start_offsets(_consumer(fake), {(OBS, 0): -1001}) == {(OBS, 0): 0}


def test_a_partition_that_never_comes_back_fails_the_consumer_after_the_wait() -> None:
    gone = KafkaError(KafkaError._UNKNOWN_PARTITION)
    fake = _Consumer(watermarks={(OBS, 0): [gone] * 3})
    with pytest.raises(ConsumerFailed, match=r"first offset of p\.observations\.v1\[0\]"):
        start_offsets(_consumer(fake), {(OBS, 0): -1001}, wait_s=0)


def test_a_partition_paused_when_revoked_is_resumed_when_it_comes_back() -> None:
    fake = _Consumer(owned=[(CAND, 0), (CAND, 1)])
    pauses = Pauses()
    pauses.set(_consumer(fake), True)
    fake.owned = [TopicPartition(CAND, 1)]  # (CAND, 0) revoked while paused: it stays paused
    pauses.set(_consumer(fake), False)
    assert fake.paused == {(CAND, 0)} and fake.resumed == [(CAND, 1)]

    pauses.assigned(_consumer(fake), [TopicPartition(CAND, 0), TopicPartition(CAND, 2)])
    assert fake.paused == set()  # (CAND, 2) was never paused: it is not resumed either
    assert fake.resumed == [(CAND, 1), (CAND, 0)]


def test_partitions_assigned_under_backpressure_are_paused_with_the_rest() -> None:
    fake = _Consumer(owned=[(CAND, 0)])
    pauses = Pauses()
    pauses.set(_consumer(fake), True)
    pauses.assigned(_consumer(fake), [TopicPartition(CAND, 1)])
    fake.owned.append(TopicPartition(CAND, 1))
    assert fake.paused == {(CAND, 0), (CAND, 1)}
    pauses.set(_consumer(fake), False)
    assert fake.paused == set()
