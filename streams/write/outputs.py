"""The blob an applied event leaves in the state store, so a replay re-emits it.

An event's outputs are computed once, stored with the event's state change
(Redis), and published in the Kafka transaction that commits the event's
offset. A replay after a crash reads the stored outputs back instead of
deciding again, so it re-emits exactly the same messages (same ids) and
re-indexes the same vector rows; it never invents new ones.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

from slotwise.processors.model import VectorRow
from slotwise.topics.codec import dumps, loads
from slotwise.topics.outbound import Outbound

__all__ = ["StoredOutputs"]


@dataclass(frozen=True, slots=True)
class StoredOutputs:
    """What an applied event leaves behind: its messages and vector rows (for a replay), and
    the decision with its reason (for people asking why the store believes what it does)."""

    messages: tuple[Outbound, ...]
    vectors: tuple[VectorRow, ...] = ()
    decision: str | None = None
    reason: str | None = None

    def encode(self) -> bytes:
        return dumps(
            {
                "m": [
                    [m.topic, _b64(m.key), _b64(m.value), [[k, _b64(v)] for k, v in m.headers]]
                    for m in self.messages
                ],
                "v": [[r.fact_id, r.subject_id, r.text, r.category] for r in self.vectors],
                "d": self.decision,
                "r": self.reason,
            }
        )

    @classmethod
    def decode(cls, blob: bytes) -> StoredOutputs:
        body = loads(blob)
        messages = tuple(
            Outbound(
                topic=topic,
                key=_unb64(key),
                value=_unb64(value),
                headers=tuple((k, _unb64(v) or b"") for k, v in headers),
            )
            for topic, key, value, headers in body["m"]
        )
        vectors = tuple(VectorRow(*row) for row in body["v"])
        return cls(messages=messages, vectors=vectors, decision=body.get("d"), reason=body.get("r"))

    @classmethod
    def of(
        cls,
        messages: Sequence[Outbound],
        vectors: Sequence[VectorRow] = (),
        *,
        decision: str | None = None,
        reason: str | None = None,
    ) -> StoredOutputs:
        return cls(tuple(messages), tuple(vectors), decision, reason)


def _b64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)
