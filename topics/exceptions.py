"""Errors raised while turning bytes from a topic into a record.

    RecordError                 every rejected message; carries ``reason`` and ``field``
    ├── MessageTooLarge         the raw value is over the byte limit
    ├── InvalidUtf8             the value is not UTF-8
    ├── InvalidJson             the value is not one JSON object (NaN/Infinity included)
    ├── UnknownSchema           ``schema`` is missing or names no record this build reads
    ├── MissingField            a required field is absent
    ├── EmptyField              a required string is empty or blank
    ├── WrongType               a field has the wrong JSON type or an invalid value
    ├── TextTooLong             ``text`` is over the configured limit
    ├── NaiveTimestamp          a timestamp carries no timezone
    └── KeyMismatch             the Kafka key differs from the body's ``subject_id``

The ``reason`` is a stable machine-readable code: it is what the dead-letter
topic carries in its ``slotwise.error.reason`` header.
"""

from __future__ import annotations

__all__ = [
    "EmptyField",
    "InvalidJson",
    "InvalidUtf8",
    "KeyMismatch",
    "MessageTooLarge",
    "MissingField",
    "NaiveTimestamp",
    "RecordError",
    "SlotwiseError",
    "TextTooLong",
    "UnknownSchema",
    "WrongType",
]


class SlotwiseError(Exception):
    """The root of every error slotwise raises on purpose; each package adds its branch.

    SlotwiseError
    ├── RecordError              topics: a message that is not a valid record (below)
    ├── TopicAdminError          topics.admin: creating or checking the topics failed
    │   ├── PartitionMismatch    co-partitioned topics with different partition counts
    │   └── TopicRequestFailed   the broker refused a request
    ├── SchemaError              processors.schema: the attribute vocabulary is malformed
    ├── SubjectMismatch          processors.resolve: a fact handed to another subject's decision
    ├── SinkError                sinks.exceptions: Redis or Milvus failed (StoreError,
    │                            StoreUnavailable, CorruptRecord, VectorIndexError, ...)
    ├── PublishError             sinks.kafka_publisher: TransactionAborted, PublisherFenced
    ├── ModelError               models.exceptions: no usable answer from the model
    │                            (ModelNotConfigured, ModelUnavailable, CircuitOpen, ...)
    ├── EmbedderError            models.exceptions: EmbedderUnavailable, EmbedderMisconfigured
    ├── WorkerError              streams.errors: StateMoved, ConsumerFailed
    ├── StackError               streams.stack: the local services (MissingTool, NotLocal, ...)
    ├── ProcessError             streams.testing: a worker child never started or died
    │   └── NotHealthy           its /healthz never answered 200 in time
    └── BenchError, WorkloadError, CorpusError, BaselineError, Mem0Unavailable   loadtest

    Branches that callers used to catch as a built-in error keep it as a second
    base (``RecordError`` is still a ``ValueError``), so ``except ValueError`` code
    written against them goes on working.
    """


class RecordError(SlotwiseError, ValueError):
    reason = "invalid_record"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class MessageTooLarge(RecordError):
    reason = "message_too_large"


class InvalidUtf8(RecordError):
    reason = "invalid_utf8"


class InvalidJson(RecordError):
    reason = "invalid_json"


class UnknownSchema(RecordError):
    reason = "unknown_schema"


class MissingField(RecordError):
    reason = "missing_field"


class EmptyField(RecordError):
    reason = "empty_field"


class WrongType(RecordError):
    reason = "wrong_type"


class TextTooLong(RecordError):
    reason = "text_too_long"


class NaiveTimestamp(RecordError):
    reason = "naive_timestamp"


class KeyMismatch(RecordError):
    reason = "key_mismatch"
