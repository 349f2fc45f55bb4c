"""The second collection a vector row is written to while a migration dual-writes.

During a dual-index migration (``slotwise migrate start``) every row the index
writes to its own collection is also embedded by the other model of the pair
and written to the other collection, so neither falls behind while the
backfill copies the rows that existed before: the new one is complete at
``switch``, and the old one is still complete if the switch is rolled back.
The index asks its ``DualWrite`` before each write; ``None`` means no
migration (or one that is finished).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from slotwise.processors.ports import Embedder

__all__ = ["DualWrite", "Shadow"]


@dataclass(frozen=True)
class Shadow:
    """Write the rows to ``collection`` too, embedded by ``embedder`` and stamped with its model."""

    collection: str
    embedder: Embedder


class DualWrite(Protocol):
    async def shadow(self, primary: str) -> Shadow | None:
        """Where rows written to ``primary`` must also go, if anywhere."""
        ...
