"""What the worker's failures mean: "a dependency is down, wait", or "this record is bad".

:func:`classify` is the classifier the wiring gives the worker's retry policy
(``streams/runtime/retry.py``); it is the one place that knows the providers' errors.
"""

from __future__ import annotations

import redis.exceptions
from pymilvus.exceptions import MilvusException

from slotwise.models.exceptions import CircuitOpen, ModelError, ModelUnavailable
from slotwise.sinks.exceptions import EmbeddingModelMismatch, StoreUnavailable, VectorIndexError
from slotwise.streams.runtime.errors import UnsupportedCommand
from slotwise.streams.runtime.retry import Verdict

__all__ = ["classify", "is_transient"]

_TRANSIENT: tuple[type[BaseException], ...] = (
    ConnectionError,
    TimeoutError,
    OSError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
    redis.exceptions.TryAgainError,
    MilvusException,
    StoreUnavailable,
    VectorIndexError,
    ModelUnavailable,
)


def is_transient(exc: BaseException) -> bool:
    """True for outages of Redis, Milvus, the model provider or the network.

    The caller retries without limit, blocking only the affected subject.
    """
    if isinstance(exc, EmbeddingModelMismatch):
        return False
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, _TRANSIENT):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def classify(exc: BaseException) -> Verdict:
    """The retry policy's verdict on one failure of one record."""
    if isinstance(exc, UnsupportedCommand):
        return Verdict("unusable", reason="unsupported_command")
    if isinstance(exc, ModelError):
        if not is_transient(exc):
            # The model answered, but unusably for this record: park it.
            return Verdict("unusable", reason=f"model_{exc.kind}")
        return Verdict(
            "provider_outage", dependency="model", counted=not isinstance(exc, CircuitOpen)
        )
    if is_transient(exc):
        return Verdict("outage")
    return Verdict("unknown")
