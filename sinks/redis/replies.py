"""What Redis answers, as the stores read it: bytes, and stored facts.

The stores' clients are built with ``decode_responses=False``, so every reply
is bytes; redis-py's stubs allow ``str`` too, hence :func:`as_bytes`.
:func:`decode_fact` is the one decoder of a stored fact: a body that does not
decode is a :class:`~slotwise.sinks.exceptions.CorruptRecord` naming its key.
"""

from __future__ import annotations

from slotwise.sinks.exceptions import CorruptRecord
from slotwise.topics.codec import decode_record
from slotwise.topics.exceptions import RecordError
from slotwise.topics.records import Fact

__all__ = ["as_bytes", "decode_fact"]


def as_bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def decode_fact(key: str, body: bytes) -> Fact:
    """The fact stored at ``key`` as ``body``."""
    try:
        record = decode_record(body, expect=(Fact,))
    except RecordError as exc:
        raise CorruptRecord(f"{key}: a stored fact does not decode: {exc}", key=key) from exc
    if not isinstance(record, Fact):
        raise CorruptRecord(f"{key}: holds a {type(record).__name__}, not a fact", key=key)
    return record
