"""The expected end state of a workload, folded from its writes in publication order.

For every single-valued slot: the value with the latest ``valid_from`` (ties: the
later write), and every value ever stated, which is what judges whether a store
holds two contradictory current memories for one slot.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from slotwise.loadtest.generator import Slot, Value, Write, surface
from slotwise.processors.schema import AttributeSchema

__all__ = ["Tally", "contradictory_slots", "stated_values", "tallied"]


@dataclass(slots=True)
class Tally:
    """The expected end state of a workload, folded from its writes in publication order."""

    kinds: Counter[str] = field(default_factory=Counter)
    out_of_order: int = 0
    writes: int = 0
    current: dict[Slot, Value] = field(default_factory=dict)
    stated: dict[Slot, set[Value]] = field(default_factory=dict)
    members: dict[Slot, set[Value]] = field(default_factory=dict)
    _since: dict[Slot, datetime] = field(default_factory=dict)

    def record(self, write: Write, schema: AttributeSchema) -> None:
        self.writes += 1
        self.kinds[write.kind] += 1
        self.out_of_order += write.out_of_order
        spec = schema.get(write.attribute)
        if spec is None or write.value is None:
            return
        slot = (write.subject_id, spec.name)
        if not spec.single_valued:
            self.members.setdefault(slot, set()).add(write.value)
            return
        self.stated.setdefault(slot, set()).add(write.value)
        since = self._since.get(slot)
        if since is None or write.valid_from >= since:  # a tie goes to the later write
            self._since[slot] = write.valid_from
            self.current[slot] = write.value

    def mix(self) -> dict[str, float]:
        """Fraction of writes of each kind, plus the out-of-order fraction."""
        total = max(1, self.writes)
        shares = {kind: self.kinds[kind] / total for kind in sorted(self.kinds)}
        shares["out_of_order"] = self.out_of_order / total
        return shares


def tallied(writes: Iterable[Write], schema: AttributeSchema, tally: Tally) -> Iterator[Write]:
    """Pass the writes through, recording each in ``tally`` (one pass for a soak)."""
    for write in writes:
        tally.record(write, schema)
        yield write


def stated_values(text: str, attribute: str, values: Iterable[Value]) -> set[Value]:
    """Which of ``values`` of ``attribute`` the text states, as whole words, ignoring case."""
    found: set[Value] = set()
    for value in values:
        pattern = rf"(?<!\w){re.escape(surface(attribute, value))}(?!\w)"
        if re.search(pattern, text, re.IGNORECASE):
            found.add(value)
    return found


def contradictory_slots(memories: Mapping[str, Sequence[str]], tally: Tally) -> list[Slot]:
    """Single-valued slots for which a subject's current memories state two or more values.

    ``memories`` maps a subject to the texts it currently holds as true. A value
    counts for a slot if it is one the workload ever stated for that slot.
    """
    found: list[Slot] = []
    for slot, values in sorted(tally.stated.items()):
        if len(values) < 2:
            continue
        subject, attribute = slot
        said: set[Value] = set()
        for text in memories.get(subject, ()):
            said |= stated_values(text, attribute, values)
        if len(said) >= 2:
            found.append(slot)
    return found
