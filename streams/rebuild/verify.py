"""``slotwise rebuild --verify``: a store compared, fact by fact, with the one the log rebuilds.

The expected state is the facts topic's latest record of every fact in scope
(tombstoned facts absent), built in memory; the store is the deployment's, live
or rebuilt. Run against both, an empty difference each time says the rebuilt
store equals the live one. What is compared:

* Redis: every fact record (all fields), and the slot index (each current fact
  under its slot, nothing else), for every subject of the log and, for
  ``--all``, every subject the store holds;
* Milvus, where search finds it: a current fact's row in the hot tier with the
  fact's text, an archived fact's row in the cold tier, and no row in either
  tier for a fact the log does not hold. Superseded and history rows may be in
  either tier (the write path leaves them hot, a rebuild and a forget pass
  move them cold; the vector fetch reads their status from Redis either way).

Run it with the workers idle: a fact applied in Redis whose transaction has not
committed yet reads as a difference.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass

from slotwise.sinks.milvus.tiers import Tier, fit_text
from slotwise.sinks.redis.cold import subjects
from slotwise.sinks.redis.keys import slot_field
from slotwise.streams.rebuild.from_log import FactsLog, RebuildStores
from slotwise.topics.records import Fact

__all__ = ["Difference", "expected_facts", "verify"]

# Where search must find a fact's row; other statuses may be in either tier.
_TIER_OF: dict[str, Tier] = {"current": "hot", "archived": "cold"}


@dataclass(frozen=True, slots=True, order=True)
class Difference:
    subject_id: str
    fact_id: str
    store: str  # redis | milvus
    what: str

    def line(self) -> str:
        return f"{self.store:6}  {self.subject_id}  {self.fact_id}  {self.what}"


async def expected_facts(log: FactsLog, subject_id: str | None) -> dict[str, dict[str, Fact]]:
    """The log's latest record of every fact in scope, by subject then fact id."""
    latest: dict[str, Fact | None] = {}
    batches = log.batches({})
    while (batch := await asyncio.to_thread(next, batches, None)) is not None:
        for fact_id, fact in batch.records:
            latest[fact_id] = fact
    found: dict[str, dict[str, Fact]] = {}
    for fact_id, fact in latest.items():
        if fact is not None and (subject_id is None or fact.subject_id == subject_id):
            found.setdefault(fact.subject_id, {})[fact_id] = fact
    return found


async def verify(
    stores: RebuildStores, log: FactsLog, *, subject_id: str | None
) -> list[Difference]:
    expected = await expected_facts(log, subject_id)
    scope = set(expected)
    if subject_id is None:
        scope |= {s async for s in subjects(stores.store)}
    else:
        scope.add(subject_id)
    found: list[Difference] = []
    for subject in sorted(scope):
        wanted = expected.get(subject, {})
        found += await _redis(stores, subject, wanted)
        found += await _milvus(stores, subject, wanted)
    return sorted(found)


async def _redis(
    stores: RebuildStores, subject: str, wanted: Mapping[str, Fact]
) -> list[Difference]:
    held = {f.fact_id: f for f in await stores.store.facts(subject, include_history=True)}
    found = [Difference(subject, f, "redis", "missing") for f in wanted.keys() - held.keys()]
    found += [Difference(subject, f, "redis", "not in the log") for f in held.keys() - wanted]
    for fact_id in wanted.keys() & held.keys():
        ours, theirs = held[fact_id].model_dump(), wanted[fact_id].model_dump()
        fields = sorted(k for k in ours if ours[k] != theirs.get(k))
        if fields:
            found.append(Difference(subject, fact_id, "redis", f"differs in {', '.join(fields)}"))
    slots = {f.fact_id: slot_field(f.attribute) for f in wanted.values() if f.status == "current"}
    current, members = await stores.redis.current_index(subject)
    for fact_id in slots.keys() | current.keys():
        if slots.get(fact_id) != current.get(fact_id):
            what = f"slot index {current.get(fact_id)!r}, the log {slots.get(fact_id)!r}"
            found.append(Difference(subject, fact_id, "redis", what))
    if members != {f"{slot}\0{fact_id}" for fact_id, slot in current.items()}:
        found.append(Difference(subject, "*", "redis", "slot index sorted set != its hash"))
    return found


async def _milvus(
    stores: RebuildStores, subject: str, wanted: Mapping[str, Fact]
) -> list[Difference]:
    rows = await stores.tiers.rows_of(subject)
    found: list[Difference] = []
    for fact in wanted.values():
        tier = _TIER_OF.get(fact.status)
        if tier is None:
            continue
        text = rows[tier].get(fact.fact_id)
        if text is None:
            found.append(Difference(subject, fact.fact_id, "milvus", f"no {tier} row"))
        elif text != fit_text(fact.text):
            found.append(Difference(subject, fact.fact_id, "milvus", f"{tier} row's text differs"))
    for tier, texts in rows.items():
        for fact_id in texts.keys() - wanted.keys():
            found.append(Difference(subject, fact_id, "milvus", f"{tier} row not in the log"))
    return found
