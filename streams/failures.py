"""Which failures mean "a dependency is down, wait" rather than "this record is bad"."""

from __future__ import annotations

import redis.exceptions
from pymilvus.exceptions import MilvusException

from sinks.exceptions import EmbeddingModelMismatch, StoreUnavailable, VectorIndexError
from streams.llm import ModelUnavailable

__all__ = ["is_transient"]

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
