"""The fuzzy stage's first half: the subject's current facts nearest the candidate.

Only current facts of the candidate's own subject may come out: a neighbour of
another subject shown to the matcher could attach one person's fact to
another, which is a privacy incident rather than a mistake. Anything else the
index returns is dropped and counted by reason.

Rows whose fact the store does not hold are searched past, not just dropped:
over-fetched hits they took would otherwise push current facts out, so a
replay after a store lost writes would see other neighbours than the first run.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Collection

from slotwise.processors.model import Neighbour
from slotwise.processors.ports import FactReader, VectorSearch
from slotwise.processors.resolve import fact_id_for
from slotwise.topics.records import CandidateFact, Fact

__all__ = ["DROP_REASONS", "vector_fetch"]

log = logging.getLogger(__name__)

DROP_REASONS = ("other_subject", "not_current", "unknown", "excluded")


_OVERFETCH = 4
# Searches per candidate at most, while the store lacks facts of rows the index returned.
_SEARCHES = 3
_SCORE_DIGITS = 4


async def vector_fetch(
    search: VectorSearch,
    reader: FactReader,
    candidate: CandidateFact,
    *,
    k: int,
    floor: float,
    exclude: Collection[str] = frozenset(),
    dropped: Counter[str] | None = None,
) -> list[Neighbour]:
    """Up to ``k`` current facts of the candidate's subject at cosine ≥ ``floor``, best first.

    The candidate's own fact id is always excluded (a replay may find its own
    row); ``exclude`` names more. Dropped hits are counted in ``dropped`` under
    one of ``DROP_REASONS``.
    """
    drops: Counter[str] = Counter() if dropped is None else dropped
    skip = {fact_id_for(candidate), *exclude}
    subject = candidate.subject_id
    lost: set[str] = set()
    for _ in range(_SEARCHES):
        scores, facts, ignored = await _ranked(
            search, reader, candidate, skip | lost, k=k, floor=floor
        )
        # A row the store has no fact for is one a lost write left behind (a failover
        # promoted a replica short of it) until the replay writes it again. Excluded by
        # the index and searched again, it takes no place among the over-fetched: the
        # replay decides on the ranking an uninterrupted run saw.
        unknown = scores.keys() - facts.keys()
        if not unknown:
            break
        lost |= unknown
    # Counted from the last search: an index that ignored the exclusion returns them again.
    drops["excluded"] += sum(1 for fact_id in ignored if fact_id not in lost)
    drops["unknown"] += sum(1 for fact_id in ignored if fact_id in lost)
    neighbours: list[Neighbour] = []
    for fact_id, similarity in scores.items():
        fact = facts.get(fact_id)
        if fact is None:
            drops["unknown"] += 1
        elif fact.subject_id != subject:
            drops["other_subject"] += 1
            log.warning("vector index returned fact %s of another subject for %s", fact_id, subject)
        elif fact.status != "current":
            drops["not_current"] += 1
        else:
            neighbours.append(Neighbour(fact=fact, similarity=similarity))
    neighbours.sort(key=lambda n: (-n.similarity, n.fact.fact_id))
    return neighbours[:k]


async def _ranked(
    search: VectorSearch,
    reader: FactReader,
    candidate: CandidateFact,
    excluded: Collection[str],
    *,
    k: int,
    floor: float,
) -> tuple[dict[str, float], dict[str, Fact], list[str]]:
    """One search: the hits' rounded scores, best first; the stored facts among them; and
    the excluded ids it returned all the same."""
    scores: dict[str, float] = {}
    ignored: list[str] = []
    # Over-fetch, so superseded rows and ties at the k-th place do not decide which
    # current facts are shown; and compare scores at a precision that the index's
    # float arithmetic (which differs between growing and sealed segments) cannot
    # move, so a replay or a rebuild decides exactly as the first run did.
    hits = await search.nearest(
        candidate.subject_id, candidate.text, k=k * _OVERFETCH, floor=floor, exclude=excluded
    )
    for fact_id, raw in hits:
        similarity = round(raw, _SCORE_DIGITS)
        if fact_id in excluded:
            ignored.append(fact_id)
        elif fact_id not in scores and similarity >= floor:
            scores[fact_id] = similarity
    if not scores:
        return scores, {}, ignored
    found = await reader.get_facts(candidate.subject_id, list(scores))
    return scores, {f.fact_id: f for f in found}, ignored
