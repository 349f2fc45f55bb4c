"""Errors raised by the state store and the vector index.

    SinkError                   every failure of a sink; the worker's commit fails with it
    ├── StoreError              Redis refused a command (script error, wrong key type)
    │   └── StoreUnavailable    Redis could not be reached or did not answer in time
    ├── CorruptRecord           a stored value no longer decodes; carries ``key``
    ├── VectorIndexError        Milvus failed a call; carries ``pending`` (rows still buffered)
    │   └── EmbeddingModelMismatch  a collection of another model, and no adapter for the pair
    └── AdapterNotFound         no stored drift adapter of that version

A stale ``expected_version`` is not an error: ``RedisStore.apply`` returns it
as an outcome, because recomputing is the normal answer to it.
"""

from __future__ import annotations

from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "AdapterNotFound",
    "CorruptRecord",
    "EmbeddingModelMismatch",
    "SinkError",
    "StoreError",
    "StoreUnavailable",
    "VectorIndexError",
]


class SinkError(SlotwiseError, RuntimeError):
    pass


class StoreError(SinkError):
    pass


class StoreUnavailable(StoreError):
    pass


class CorruptRecord(SinkError):
    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


class VectorIndexError(SinkError):
    def __init__(self, message: str, *, pending: int = 0) -> None:
        super().__init__(message)
        self.pending = pending


class EmbeddingModelMismatch(VectorIndexError):
    pass


class AdapterNotFound(SinkError):
    pass
