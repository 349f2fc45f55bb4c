"""A subject's vector rows put back in line with its Redis state before a healing replay.

When Redis comes back missing writes whose Kafka transactions were committed (a
node crash under ``appendfsync everysec``, a failover to a replica behind), the
worker replays the partition from the store's commit marks (streams/runtime/recovery.py,
``Recovery.takeover``; streams/runtime/checkpoint.py). When the server changes under a running
worker, the events it applied since its last commit may be lost the same way
(the replicas had not received them), and are replayed too. The Milvus index
was not rolled back with Redis: it still holds what the lost events wrote
there — rows of facts the store no longer knows, the new text of an update it
lost, a current fact a lost forget pass moved to the cold tier. A lost
free-text event decided again against those rows would see neighbours its
first run never saw (or miss one it saw) and could decide otherwise, so the
healed store would differ from an uninterrupted run's.

So before the first replayed event of a subject decides anything, its rows are
made to agree with its facts in Redis, the truth the replay starts from:

- a row of a fact the store does not hold goes, from every collection;
- a current fact's row in the cold tier goes back to the hot one, an archived
  fact's row in the hot tier to the cold one (``MilvusTiers.settle``);
- a row whose text is not its fact's, or a fact with no row at all, is written
  again from the fact, in its status's tier: a retired fact's too, since its
  row takes a place among the hits a search over-fetches in an uninterrupted
  run, and its absence would let a deeper neighbour in.

Rows the store agrees with stay where they are, superseded ones in the hot
tier included: a forget pass moves those, in an uninterrupted run too. The
replayed events then write their own rows again, as the first run did.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from slotwise.processors.resolve import vector_row
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.milvus.tiers import MilvusTiers, Tier, fit_text
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.runtime.metrics import INDEX_HEALS
from slotwise.topics.records import Fact

__all__ = ["IndexHeal", "IndexHealPlan", "plan_index_heal"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IndexHealPlan:
    """What differs between a subject's facts in Redis and its rows in Milvus."""

    #: Rows of facts the store does not hold (written by events it lost).
    lost: tuple[str, ...] = ()
    #: Facts whose row is in the wrong tier for their status.
    misplaced: tuple[Fact, ...] = ()
    #: Facts whose row holds another text, or with no row at all: a retired fact's row
    #: takes a place among a search's hits in an uninterrupted run too.
    rewrite: tuple[Fact, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.lost or self.misplaced or self.rewrite)


def plan_index_heal(facts: Sequence[Fact], rows: Mapping[Tier, Mapping[str, str]]) -> IndexHealPlan:
    """The plan for a subject from its facts (every status) and its rows per tier
    (fact id → the row's text)."""
    hot, cold = rows["hot"], rows["cold"]
    known = {f.fact_id for f in facts}
    misplaced = [
        f
        for f in facts
        if (f.status == "current" and f.fact_id in cold)
        or (f.status == "archived" and f.fact_id in hot)
    ]
    moving = {f.fact_id for f in misplaced}
    rewrite = [
        f
        for f in facts
        if f.fact_id not in moving
        and (
            (f.fact_id in hot and hot[f.fact_id] != fit_text(f.text))
            or (f.fact_id not in hot and f.fact_id not in cold)
        )
    ]
    return IndexHealPlan(
        lost=tuple(sorted((hot.keys() | cold.keys()) - known)),
        misplaced=tuple(misplaced),
        rewrite=tuple(rewrite),
    )


class IndexHeal:
    """Carries out :func:`plan_index_heal` for one subject on the worker's own stores."""

    def __init__(self, store: RedisStore, index: MilvusIndex, tiers: MilvusTiers) -> None:
        self._store = store
        self._index = index
        self._tiers = tiers

    async def __call__(self, subject_id: str) -> IndexHealPlan:
        # Rows still buffered were computed before the store went back: the replay
        # writes its own again.
        await self._index.discard(subject_id)
        facts = await self._store.facts(subject_id, include_history=True)
        plan = plan_index_heal(facts, await self._tiers.rows_of(subject_id))
        INDEX_HEALS.labels("agreed" if plan.empty else "repaired").inc()
        if plan.empty:
            return plan
        if plan.lost:
            await self._index.delete_facts(subject_id, plan.lost)
        if plan.misplaced:
            await self._tiers.settle(subject_id, plan.misplaced)
        if plan.rewrite:
            self._index.add(vector_row(f) for f in plan.rewrite)
            await self._index.flush()
            archived = [f for f in plan.rewrite if f.status == "archived"]
            if archived:
                await self._tiers.settle(subject_id, archived)
        log.info(
            "subject %s: vector rows put back in line with the store before its replay "
            "(%d lost, %d misplaced, %d rewritten)",
            subject_id,
            len(plan.lost),
            len(plan.misplaced),
            len(plan.rewrite),
        )
        return plan
