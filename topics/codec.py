"""Bytes on a topic ⇄ records: one orjson wrapper and the typed decode path."""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from slotwise.topics.exceptions import (
    EmptyField,
    InvalidJson,
    InvalidUtf8,
    KeyMismatch,
    MessageTooLarge,
    MissingField,
    NaiveTimestamp,
    RecordError,
    TextTooLong,
    UnknownSchema,
    WrongType,
)
from slotwise.topics.records import (
    CandidateFact,
    Command,
    ErasureAttestation,
    Fact,
    Observation,
    Record,
    ReviewItem,
    SupersessionEvent,
)

__all__ = [
    "CONTENT_TYPE",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_MAX_TEXT_BYTES",
    "decode_record",
    "dumps",
    "encode_record",
    "loads",
]

CONTENT_TYPE = "application/json"
DEFAULT_MAX_TEXT_BYTES = 64 * 1024
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024

_BY_SCHEMA: dict[str, type[BaseModel]] = {
    "observation/1": Observation,
    "candidate/1": CandidateFact,
    "command/1": Command,
    "fact/1": Fact,
    "supersession/1": SupersessionEvent,
    "review/1": ReviewItem,
    "erasure/1": ErasureAttestation,
}
_EMPTY = {"string_too_short", "blank"}
_NAIVE = {"timezone_aware"}

R = TypeVar("R", bound=BaseModel)


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def loads(raw: bytes | str) -> Any:
    return orjson.loads(raw)


def encode_record(record: BaseModel) -> bytes:
    return orjson.dumps(record.model_dump(mode="json", by_alias=True))


def decode_record(
    raw: bytes | None,
    *,
    key: bytes | None = None,
    expect: tuple[type[R], ...] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES,
) -> Record:
    """Validate one message value; raise a :class:`RecordError` that names the field.

    ``key``, when given, must equal the body's ``subject_id`` (a mismatched key
    would put the subject's writes on two partitions). ``expect`` restricts the
    record kinds a topic accepts.
    """
    if raw is None:
        raise InvalidJson("value is empty (a tombstone is not a record)")
    if len(raw) > max_message_bytes:
        raise MessageTooLarge(f"value is {len(raw)} bytes, over the limit of {max_message_bytes}")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidUtf8(f"value is not valid UTF-8 at byte {exc.start}") from None
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidJson(f"value is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise InvalidJson(f"value must be a JSON object, not {type(body).__name__}")
    schema = body.get("schema")
    model = _BY_SCHEMA.get(schema) if isinstance(schema, str) else None
    if model is None or (expect is not None and model not in expect):
        accepted = sorted(s for s, m in _BY_SCHEMA.items() if expect is None or m in expect)
        raise UnknownSchema(
            f"schema {schema!r} is not one of {', '.join(accepted)}", field="schema"
        )
    try:
        record = model.model_validate(body)
    except ValidationError as exc:
        raise _typed(model, exc) from None
    text = getattr(record, "text", None)
    if isinstance(text, str) and len(text.encode()) > max_text_bytes:
        raise TextTooLong(
            f"text is {len(text.encode())} bytes, over the limit of {max_text_bytes}",
            field="text",
        )
    if key is not None and key.decode("utf-8", "replace") != getattr(record, "subject_id", None):
        raise KeyMismatch("message key does not equal the body's subject_id", field="subject_id")
    return record  # type: ignore[return-value]


def _typed(model: type[BaseModel], exc: ValidationError) -> RecordError:
    first = exc.errors(include_url=False)[0]
    field = _field(model, first["loc"])
    problem = f"{field}: {first['msg']}"
    kind = first["type"]
    if kind == "missing":
        return MissingField(f"{field}: required field is missing", field=field)
    if kind in _EMPTY:
        return EmptyField(f"{field}: must not be empty", field=field)
    if kind in _NAIVE:
        return NaiveTimestamp(f"{field}: timestamp must carry a timezone", field=field)
    return WrongType(problem, field=field)


def _field(model: type[BaseModel], loc: tuple[int | str, ...]) -> str | None:
    """The error's location up to its last part that names a field of a record.

    Pydantic appends the union member that failed ("value.str" for a scalar
    union), which is no field a producer could look up.
    """
    path: list[str] = []
    current: Any = model
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            break
        fields = {info.alias or name: info for name, info in current.model_fields.items()}
        if part not in fields:
            break
        path.append(str(part))
        current = fields[str(part)].annotation
    return ".".join(path) or None
