"""Messages the worker will publish: a catalogue kind, key, value and headers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import CONTENT_TYPE, encode_record

__all__ = ["Outbound", "TopicKind", "record_message"]

TopicKind = Literal["candidates", "supersessions", "facts", "review", "erasures", "deadletter"]


@dataclass(frozen=True, slots=True)
class Outbound:
    """One message to publish.

    ``topic`` is a catalogue kind, not a name, so stored blobs survive a prefix change.
    """

    topic: TopicKind
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()

    def topic_name(self, catalogue: Catalogue) -> str:
        name: str = getattr(catalogue, self.topic)
        return name


def record_message(topic: TopicKind, key: str, record: BaseModel) -> Outbound:
    schema = str(record.model_dump(by_alias=True, include={"schema_"}).get("schema", ""))
    return Outbound(
        topic=topic,
        key=key.encode(),
        value=encode_record(record),
        headers=(("content-type", CONTENT_TYPE.encode()), ("schema", schema.encode())),
    )
