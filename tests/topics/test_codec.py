"""Every way topics/codec.py rejects a message: the error's type, the field it names, its reason."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from slotwise.topics.codec import DEFAULT_MAX_TEXT_BYTES, decode_record, encode_record
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
from slotwise.topics.records import CandidateFact, Observation

_MISSING = object()


def _observation(**changes: Any) -> bytes:
    body: dict[str, Any] = {
        "schema": "observation/1",
        "observation_id": "obs-1",
        "subject_id": "user-42",
        "session_id": "s-9",
        "speaker": "user",
        "text": "I start at Stripe on Monday.",
        "observed_at": "2026-03-14T10:00:00Z",
        "source": "chat",
        "metadata": {},
    }
    for field, value in changes.items():
        if value is _MISSING:
            del body[field]
        else:
            body[field] = value
    return orjson.dumps(body)


def _rejected(raw: bytes | None, kind: type[RecordError], **options: Any) -> RecordError:
    with pytest.raises(kind) as caught:
        decode_record(raw, **options)
    return caught.value


def test_a_valid_observation_decodes_and_encodes_back_to_the_same_body() -> None:
    record = decode_record(_observation(), key=b"user-42")
    assert isinstance(record, Observation)
    assert orjson.loads(encode_record(record)) == orjson.loads(_observation())


def test_invalid_json_names_no_field() -> None:
    error = _rejected(b'{"schema": "observation/1", ', InvalidJson)
    assert error.field is None
    assert error.reason == "invalid_json"


def test_invalid_utf8_names_no_field_and_the_byte() -> None:
    error = _rejected(_observation(text="caf") + b"\xff", InvalidUtf8)
    assert error.field is None
    assert "at byte" in str(error)


def test_missing_subject_id_names_subject_id() -> None:
    error = _rejected(_observation(subject_id=_MISSING), MissingField)
    assert error.field == "subject_id"
    assert error.reason == "missing_field"


def test_empty_subject_id_names_subject_id() -> None:
    error = _rejected(_observation(subject_id=""), EmptyField)
    assert error.field == "subject_id"


def test_blank_subject_id_counts_as_empty() -> None:
    error = _rejected(_observation(subject_id="   "), EmptyField)
    assert error.field == "subject_id"


def test_a_number_where_text_belongs_names_text() -> None:
    error = _rejected(_observation(text=5), WrongType)
    assert error.field == "text"
    assert error.reason == "wrong_type"


def test_a_string_where_a_number_belongs_names_confidence() -> None:
    body = orjson.loads(encode_record(_candidate()))
    body["confidence"] = "0.9"
    error = _rejected(orjson.dumps(body), WrongType)
    assert error.field == "confidence"


def test_an_unknown_schema_version_names_schema() -> None:
    error = _rejected(_observation(schema="observation/2"), UnknownSchema)
    assert error.field == "schema"
    assert "observation/1" in str(error)


def test_text_over_the_default_limit_names_text() -> None:
    error = _rejected(_observation(text="x" * (DEFAULT_MAX_TEXT_BYTES + 1)), TextTooLong)
    assert DEFAULT_MAX_TEXT_BYTES == 64 * 1024
    assert error.field == "text"


def test_the_text_limit_is_configurable_and_counts_utf8_bytes() -> None:
    text = "é" * 6  # 12 bytes, 6 characters
    assert isinstance(decode_record(_observation(text=text), max_text_bytes=12), Observation)
    error = _rejected(_observation(text=text), TextTooLong, max_text_bytes=11)
    assert error.field == "text"


def test_a_timestamp_without_timezone_names_the_timestamp() -> None:
    error = _rejected(_observation(observed_at="2026-03-14T10:00:00"), NaiveTimestamp)
    assert error.field == "observed_at"
    assert error.reason == "naive_timestamp"


def test_a_unix_number_timestamp_names_the_timestamp() -> None:
    error = _rejected(_observation(observed_at=1_773_482_400), WrongType)
    assert error.field == "observed_at"


@pytest.mark.parametrize("spelled", ["1773482400", "3", "1773482400.5"])
def test_a_unix_number_in_a_string_names_the_timestamp(spelled: str) -> None:
    error = _rejected(_observation(observed_at=spelled), WrongType)
    assert error.field == "observed_at"


def test_a_message_over_the_byte_limit_names_no_field() -> None:
    error = _rejected(_observation(), MessageTooLarge, max_message_bytes=64)
    assert error.field is None
    assert error.reason == "message_too_large"


def test_a_key_that_differs_from_the_body_names_subject_id() -> None:
    error = _rejected(_observation(), KeyMismatch, key=b"user-43")
    assert error.field == "subject_id"
    assert error.reason == "key_mismatch"


def test_nan_is_not_json_and_names_no_field() -> None:
    raw = _observation().replace(b'"metadata":{}', b'"metadata":{"score":NaN}')
    error = _rejected(raw, InvalidJson)
    assert error.field is None


def test_metadata_nested_too_deep_names_metadata() -> None:
    nested: dict[str, Any] = {}
    level = nested
    for _ in range(10):
        level["a"] = {}
        level = level["a"]
    error = _rejected(_observation(metadata=nested), WrongType)
    assert error.field == "metadata"
    assert "deeper" in str(error)


def test_control_characters_in_an_identifier_name_it() -> None:
    error = _rejected(_observation(subject_id="user\x0042"), WrongType)
    assert error.field == "subject_id"
    assert "control" in str(error)


def test_control_characters_in_a_candidate_attribute_name_it() -> None:
    body = _candidate().model_dump(mode="json", by_alias=True) | {"attribute": "employer\x00x"}
    error = _rejected(orjson.dumps(body), WrongType)
    assert error.field == "attribute"
    assert "control" in str(error)


def test_a_tombstone_is_not_a_record() -> None:
    error = _rejected(None, InvalidJson)
    assert error.field is None


def _candidate() -> CandidateFact:
    return CandidateFact.model_validate(
        {
            "schema": "candidate/1",
            "candidate_id": "cand-1",
            "subject_id": "user-42",
            "attribute": "employer",
            "value": "Stripe",
            "text": "User works at Stripe.",
            "observed_at": "2026-03-14T10:00:00Z",
        }
    )
