"""How the worker retries one record, told by a classifier what each failure means.

The worker knows no provider: the wiring hands it a :data:`Classifier` that
turns an exception into a :class:`Verdict` (``streams/runtime/failures.py`` is the one
the worker runs with). The policy then does what the verdict says:

* ``outage`` — a dependency (Redis, Milvus, the network) is down: wait for it
  without limit, blocking only this record's subject, and report it on /healthz;
* ``provider_outage`` — the model provider failed a call's whole budget: retry,
  but once ``model_attempts`` such failures have been counted while *other*
  records made progress meanwhile, the fault is this record's, not the
  provider's: give it up (``model_unavailable``). A fast failure of an open
  circuit breaker (``counted=False``) sent nothing and counts no attempt;
* ``unusable`` — the dependency answered, unusably for this record: give it up
  at once with the verdict's reason;
* ``unknown`` — a bug or a record the code cannot handle: a few attempts with
  backoff, then give it up (``processing_failed``).

Giving up is the caller's: the worker dead-letters the record with the reason.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from slotwise.streams.runtime import metrics
from slotwise.streams.runtime.health import Health

__all__ = ["Classifier", "GiveUp", "RetryPolicy", "Verdict", "backoff"]

log = logging.getLogger(__name__)

T = TypeVar("T")

FailureKind = Literal["outage", "provider_outage", "unusable", "unknown"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one failure means for the record that hit it."""

    kind: FailureKind
    reason: str = "processing_failed"  # the dead-letter reason when the record is given up
    dependency: str = "write-path"  # the /healthz entry an outage is reported under
    counted: bool = True  # a provider outage that spent an attempt


Classifier = Callable[[BaseException], Verdict]


@dataclass(frozen=True, slots=True)
class GiveUp:
    """Why a record was given up: its dead-letter reason and message."""

    reason: str
    message: str


def backoff(attempt: int, base: float = 0.1, cap: float = 5.0) -> float:
    """Capped exponential backoff with full jitter."""
    return random.uniform(0, min(cap, base * 2**attempt))


class RetryPolicy:
    def __init__(
        self,
        classify: Classifier,
        health: Health,
        *,
        max_attempts: int = 5,
        model_attempts: int = 3,
        log_every: int = 20,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._classify = classify
        self._health = health
        self._max_attempts = max_attempts
        self._model_attempts = model_attempts
        self._log_every = log_every
        self._sleep = sleep
        self._progress_at = 0.0  # when a progress-marking record last succeeded
        # Every dependency reported failing; any record's success reports them answering
        # again, as a record gets through only when what it needs answers.
        self._reported: set[str] = set()

    async def run(
        self,
        attempt: Callable[[], Awaitable[T]],
        *,
        where: str,
        kind: str,
        marks_progress: bool = False,
    ) -> T | GiveUp:
        """``attempt()`` until it succeeds or the record is given up.

        ``where`` names the record in logs (``topic[partition]@offset``), ``kind``
        labels the retry metric; a success with ``marks_progress`` tells other
        records' provider-outage rule that the provider is answering.
        """
        attempts, waits = 0, 0
        began = time.monotonic()
        while True:
            try:
                result = await attempt()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                verdict = self._classify(exc)
                if verdict.kind == "unusable":
                    return GiveUp(verdict.reason, str(exc))
                if verdict.kind == "provider_outage":
                    attempts += verdict.counted
                    if attempts >= self._model_attempts and self._progress_at > began:
                        return GiveUp("model_unavailable", str(exc))
                    waits += 1
                    self._failing(verdict.dependency, exc)
                    await self._sleep(backoff(waits))
                elif verdict.kind == "outage":
                    if waits % self._log_every == 0:
                        log.warning("%s: %s: %s; retrying", where, type(exc).__name__, exc)
                    waits += 1
                    self._failing(verdict.dependency, exc)
                    metrics.RETRIES.labels(kind).inc()
                    await self._sleep(backoff(waits))
                else:
                    attempts += 1
                    if attempts >= self._max_attempts:
                        log.exception("giving up on %s", where)
                        return GiveUp("processing_failed", repr(exc))
                    await self._sleep(backoff(attempts))
                continue
            for dependency in self._reported:
                self._health.ok(dependency)
            if marks_progress:
                self._progress_at = time.monotonic()
            return result

    def _failing(self, dependency: str, exc: Exception) -> None:
        self._reported.add(dependency)
        self._health.failing(dependency, f"{type(exc).__name__}: {exc}")
