import pytest

from slotwise.streams.runtime.offsets import PartitionLedger
from slotwise.topics.outbound import Outbound


def _msg(tag: str) -> tuple[Outbound, ...]:
    return (Outbound(topic="facts", key=tag.encode(), value=b"{}"),)


def test_nothing_is_released_while_the_lowest_offset_runs() -> None:
    ledger = PartitionLedger()
    for offset in (10, 11, 12):
        ledger.track(offset)
    ledger.complete(11, _msg("b"))
    ledger.complete(12, _msg("c"))
    assert ledger.release() is None
    assert ledger.lowest_unfinished == 10


def test_release_is_the_finished_prefix_in_offset_order() -> None:
    ledger = PartitionLedger()
    for offset in (10, 11, 12, 13):
        ledger.track(offset)
    ledger.complete(12, _msg("c"))
    ledger.complete(10, _msg("a"))
    ledger.complete(11, _msg("b"))
    release = ledger.release()
    assert release is not None
    assert [m.key for m in release.messages] == [b"a", b"b", b"c"]
    assert release.next_offset == 13
    assert ledger.held == 1 and ledger.in_flight == 1
    assert ledger.release() is None


def test_an_event_without_outputs_still_advances_the_offset() -> None:
    ledger = PartitionLedger()
    ledger.track(5)
    ledger.complete(5, ())
    release = ledger.release()
    assert release is not None and release.next_offset == 6 and release.messages == ()


def test_an_offset_delivered_again_is_refused_and_points_past_what_was_taken() -> None:
    ledger = PartitionLedger(start=3)
    assert not ledger.track(2)  # below where the partition was assigned
    assert ledger.track(5) and ledger.track(7)  # a gap is fine: transaction markers
    assert not ledger.track(5) and not ledger.track(0)
    assert ledger.next_offset == 8
    ledger.complete(5, ())
    ledger.complete(7, ())
    release = ledger.release()
    assert release is not None and release.next_offset == 8


def test_completing_an_unknown_offset_is_refused() -> None:
    with pytest.raises(KeyError):
        PartitionLedger().complete(1, ())


def test_replayed_events_below_the_committed_offset_publish_nothing() -> None:
    ledger = PartitionLedger(quiet_below=12)
    for offset in (10, 11, 12):
        ledger.track(offset)
        ledger.complete(offset, (Outbound(topic="facts", key=b"k", value=str(offset).encode()),))
    release = ledger.release()
    assert release is not None
    assert [m.value for m in release.messages] == [b"12"]
    assert release.next_offset == 13
