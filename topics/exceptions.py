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
    "TextTooLong",
    "UnknownSchema",
    "WrongType",
]


class RecordError(ValueError):
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
