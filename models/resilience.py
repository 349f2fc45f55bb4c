"""How a model call is retried, and when a failing provider is left alone.

:class:`RetryPolicy` is capped exponential backoff with full jitter that honours
the provider's ``retry-after``; :class:`CircuitBreaker` stops a failing provider
from being hammered and makes calls fail fast while it recovers. The client in
``llm.py`` runs every attempt through both.
"""

from __future__ import annotations

import enum
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import Gauge

from slotwise.models.exceptions import CircuitOpen

__all__ = ["BreakerState", "CircuitBreaker", "Clock", "RetryPolicy"]

Clock = Callable[[], float]

BREAKER_STATE = Gauge("slotwise_llm_breaker_state", "0 closed, 1 half-open, 2 open")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Capped exponential backoff with full jitter (delay ~ U(0, min(cap, base·2^n)))."""

    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    max_retry_after_s: float = 60.0

    def backoff(self, retry: int, rng: random.Random) -> float:
        return rng.uniform(0.0, min(self.max_delay_s, self.base_delay_s * 2**retry))

    def delay(self, retry: int, rng: random.Random, retry_after: float | None) -> float:
        """The provider's ``retry-after`` wins over a shorter jittered backoff."""
        jittered = self.backoff(retry, rng)
        if retry_after is None:
            return jittered
        return max(jittered, min(retry_after, self.max_retry_after_s))


class BreakerState(enum.IntEnum):
    CLOSED = 0
    HALF_OPEN = 1
    OPEN = 2


class CircuitBreaker:
    """Closed → open after ``failure_threshold`` consecutive failures → half-open after
    ``cooldown_s`` → one probe decides: success closes, failure reopens.

    Only provider failures count (5xx, 529, timeouts, connection errors). A 429
    says "slow down", which the backoff already does; opening on it would turn
    a rate limit into a flood of review items.
    """

    def __init__(
        self, failure_threshold: int = 5, cooldown_s: float = 30.0, clock: Clock = time.monotonic
    ) -> None:
        self._threshold = failure_threshold
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._probing = False
        self._calls: set[object] = set()
        BREAKER_STATE.set(self._state)

    @property
    def state(self) -> BreakerState:
        return self._state

    def admit(self) -> bool:
        """Let one attempt through or raise :class:`CircuitOpen`; True if it is the probe."""
        if self._state is BreakerState.OPEN:
            waited = self._clock() - self._opened_at
            if waited < self._cooldown_s:
                raise CircuitOpen(self._cooldown_s - waited)
            self._set(BreakerState.HALF_OPEN)
        if self._state is BreakerState.HALF_OPEN:
            if self._probing:
                raise CircuitOpen(0.0)
            self._probing = True
            return True
        return False

    def succeeded(self, probe: bool) -> None:
        if probe or self._state is BreakerState.CLOSED:
            self._failures = 0
            self._calls.clear()
            self._probing = False
            self._set(BreakerState.CLOSED)

    def failed(self, probe: bool, call: object = None) -> None:
        if probe:
            self._probing = False
            self._open()
        elif self._state is BreakerState.CLOSED and (call is None or call not in self._calls):
            # One call retrying is one failing request, not a failing provider.
            if call is not None:
                self._calls.add(call)
            self._failures += 1
            if self._failures >= self._threshold:
                self._open()

    def released(self, probe: bool) -> None:
        """The attempt ended without saying anything about the provider's health."""
        if probe:
            self._probing = False

    def _open(self) -> None:
        self._opened_at = self._clock()
        self._set(BreakerState.OPEN)

    def _set(self, state: BreakerState) -> None:
        self._state = state
        BREAKER_STATE.set(state)
