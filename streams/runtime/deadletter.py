"""Dead-letter messages: the original key and bytes, the reason and the source in headers.

Header names follow the pattern of Kafka Connect's ``errors.deadletterqueue``
context headers, under a ``slotwise.`` prefix. A value larger than the limit
is cut to it (and says so): a dead letter that cannot be written would stop
the partition, which is the one thing a dead-letter topic exists to prevent.
"""

from __future__ import annotations

from datetime import datetime

from slotwise.topics.outbound import Outbound

__all__ = [
    "H_ERROR_FIELD",
    "H_ERROR_MESSAGE",
    "H_ERROR_REASON",
    "H_SOURCE_OFFSET",
    "H_SOURCE_PARTITION",
    "H_SOURCE_TOPIC",
    "dead_letter",
]

H_ERROR_REASON = "slotwise.error.reason"
H_ERROR_MESSAGE = "slotwise.error.message"
H_ERROR_FIELD = "slotwise.error.field"
H_ERROR_AT = "slotwise.error.at"
H_SOURCE_TOPIC = "slotwise.source.topic"
H_SOURCE_PARTITION = "slotwise.source.partition"
H_SOURCE_OFFSET = "slotwise.source.offset"
H_TRUNCATED = "slotwise.value.truncated-from"


def dead_letter(
    *,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[tuple[str, bytes], ...],
    topic: str,
    partition: int,
    offset: int,
    reason: str,
    message: str,
    field: str | None,
    at: datetime,
    max_value_bytes: int,
) -> Outbound:
    extra: list[tuple[str, bytes]] = [
        (H_ERROR_REASON, reason.encode()),
        (H_ERROR_MESSAGE, message[:1000].encode("utf-8", "replace")),
        (H_SOURCE_TOPIC, topic.encode()),
        (H_SOURCE_PARTITION, str(partition).encode()),
        (H_SOURCE_OFFSET, str(offset).encode()),
        (H_ERROR_AT, at.isoformat().encode()),
    ]
    if field is not None:
        extra.append((H_ERROR_FIELD, field.encode()))
    if value is not None and len(value) > max_value_bytes:
        extra.append((H_TRUNCATED, str(len(value)).encode()))
        value = value[:max_value_bytes]
    original = [(k, v) for k, v in headers if not k.startswith("slotwise.")]
    return Outbound(topic="deadletter", key=key, value=value, headers=(*original, *extra))
