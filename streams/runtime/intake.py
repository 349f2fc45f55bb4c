"""What a consumed message becomes: the record its topic carries, or a dead letter saying why not.

The observations topic carries observations; the candidates topic carries
candidates and commands. A message that does not decode to one of those, is
keyless, or is over a size limit becomes a dead letter with the reason, so the
partition moves on and nothing is lost (``deadletter.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slotwise.streams.runtime import clock, metrics
from slotwise.streams.runtime.consumed import Consumed
from slotwise.streams.runtime.deadletter import dead_letter
from slotwise.topics.codec import decode_record
from slotwise.topics.exceptions import RecordError
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import CandidateFact, Command, Observation, Record

__all__ = ["Intake"]

# Under the broker's and the producer's ~1 MB message limit, or the dead letter
# itself could never be published and every commit would stall behind it.
_DEADLETTER_VALUE_BYTES = 512 * 1024

_OBSERVATION: tuple[type[Any], ...] = (Observation,)
_CANDIDATE_OR_COMMAND: tuple[type[Any], ...] = (CandidateFact, Command)


@dataclass(frozen=True, slots=True)
class Intake:
    observations: str
    max_message_bytes: int
    max_text_bytes: int

    def read(self, consumed: Consumed) -> Record | Outbound:
        """The record, or the dead letter that takes its place in the partition's outputs."""
        try:
            return decode_record(
                consumed.value,
                # A keyless record has no subject partition: it must not pass unchecked.
                key=consumed.key if consumed.key is not None else b"",
                expect=(
                    _OBSERVATION if consumed.topic == self.observations else _CANDIDATE_OR_COMMAND
                ),
                max_message_bytes=self.max_message_bytes,
                max_text_bytes=self.max_text_bytes,
            )
        except RecordError as exc:
            return self.dead_letter(consumed, exc.reason, exc.message, exc.field)

    def dead_letter(
        self, consumed: Consumed, reason: str, text: str, field: str | None
    ) -> Outbound:
        metrics.DEADLETTERS.labels(reason).inc()
        return dead_letter(
            key=consumed.key,
            value=consumed.value,
            headers=consumed.headers,
            topic=consumed.topic,
            partition=consumed.partition,
            offset=consumed.offset,
            reason=reason,
            message=text,
            field=field,
            at=clock.now(),
            max_value_bytes=min(self.max_message_bytes, _DEADLETTER_VALUE_BYTES),
        )
