"""The exact stage of the cascade: the slot's current facts by key, zero false matches."""

from __future__ import annotations

from slotwise.processors.ports import FactReader
from slotwise.topics.records import CandidateFact, Fact

__all__ = ["exact_join"]


async def exact_join(reader: FactReader, candidate: CandidateFact) -> list[Fact]:
    """Current facts of ``(candidate.subject_id, candidate.attribute)``; none without an attribute.

    The reader's answer is filtered again: a stale index entry pointing at a
    retired fact, or at another subject's fact, must not become an incumbent.
    """
    if candidate.attribute is None:
        return []
    facts = await reader.current_in_slot(candidate.subject_id, candidate.attribute)
    return [
        f
        for f in facts
        if f.status == "current"
        and f.subject_id == candidate.subject_id
        and f.attribute == candidate.attribute
    ]
