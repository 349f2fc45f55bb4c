from __future__ import annotations

import pytest

from slotwise.loadtest.producer import TokenBucket


class FakeClock:
    """Time that moves only when the bucket waits (or the test says so)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    def wait(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


@pytest.mark.parametrize("rate", [5.0, 50.0, 1234.5])
def test_admits_exactly_the_rate_over_time(rate: float) -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate, clock=clock, wait=clock.wait)
    start = clock.now
    for _ in range(1001):
        bucket.take()
    # the first token is there at once; the next thousand take a thousand intervals
    assert clock.now - start == pytest.approx(1000 / rate, rel=1e-9)


def test_late_wake_ups_do_not_slow_the_rate() -> None:
    clock = FakeClock()

    def late(seconds: float) -> None:
        clock.now += seconds + 0.002  # poll returns a couple of milliseconds late

    bucket = TokenBucket(50.0, clock=clock, wait=late)
    for _ in range(1001):
        bucket.take()
    assert clock.now - 100.0 == pytest.approx(20.0, abs=0.01)


def test_an_early_wake_waits_again_for_the_rest() -> None:
    clock = FakeClock()

    def early(seconds: float) -> None:
        clock.waits.append(seconds)
        clock.now += seconds / 2  # poll returned early: a delivery report arrived

    bucket = TokenBucket(10.0, burst=1.0, clock=clock, wait=early)
    bucket.take()
    bucket.take()
    assert clock.now - 100.0 == pytest.approx(0.1)
    assert len(clock.waits) > 1


def test_a_late_producer_gets_at_most_burst_tokens_at_once() -> None:
    clock = FakeClock()
    bucket = TokenBucket(5.0, burst=3.0, clock=clock, wait=clock.wait)
    bucket.take()
    clock.now += 60.0  # stalled for a minute
    for _ in range(3):
        bucket.take()
    assert clock.waits == []
    bucket.take()
    assert clock.waits == [pytest.approx(0.2)]


def test_refuses_a_rate_it_cannot_meter() -> None:
    with pytest.raises(ValueError, match="rate"):
        TokenBucket(0.0)
