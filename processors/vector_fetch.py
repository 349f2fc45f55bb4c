"""The fuzzy stage's first half: the subject's current facts nearest the candidate.

Only current facts of the candidate's own subject may come out: a neighbour of
another subject shown to the matcher could attach one person's fact to
another, which is a privacy incident rather than a mistake. Anything else the
index returns is dropped and counted by reason.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Collection

from slotwise.processors.model import Neighbour
from slotwise.processors.ports import FactReader, VectorSearch
from slotwise.processors.resolve import fact_id_for
from slotwise.topics.records import CandidateFact

__all__ = ["DROP_REASONS", "vector_fetch"]

log = logging.getLogger(__name__)

DROP_REASONS = ("other_subject", "not_current", "unknown", "excluded")


_OVERFETCH = 4
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
    scores: dict[str, float] = {}
    # Over-fetch, so superseded rows and ties at the k-th place do not decide which
    # current facts are shown; and compare scores at a precision that the index's
    # float arithmetic (which differs between growing and sealed segments) cannot
    # move, so a replay or a rebuild decides exactly as the first run did.
    hits = await search.nearest(subject, candidate.text, k=k * _OVERFETCH, floor=floor)
    for fact_id, raw in hits:
        similarity = round(raw, _SCORE_DIGITS)
        if fact_id in skip:
            drops["excluded"] += 1
        elif fact_id not in scores and similarity >= floor:
            scores[fact_id] = similarity
    if not scores:
        return []
    facts = {f.fact_id: f for f in await reader.get_facts(subject, list(scores))}
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
