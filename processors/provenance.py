"""Provenance: which facts were derived from a fact that just stopped being true.

A derived fact (an importer's summary, a consolidation rewrite) names its
sources in ``derived_from``. When a source is superseded, what was built on it
may be stale, and marking only the first hop is the article's "contradiction
cascade in reflection": a summary of a summary keeps being quoted. So the
walk follows ``derived_from`` backwards, depth-bounded (default 3 hops, as the
seed recommends: deep enough for a reflection of a reflection, bounded so one
supersession never fans out over a whole store), and marks every current
dependent ``needs_revalidation``. Nothing is re-derived here: that is a model
call, and the consolidation pass makes it (or sends the fact to review).

An erasure does not walk: its scope already includes, transitively, every
fact derived from what it erases (``processors.erase_scope``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from slotwise.processors.ports import FactReader
from slotwise.topics.records import Fact

__all__ = [
    "DEFAULT_DEPTH",
    "DependentsReader",
    "OfflineRederiver",
    "Rederivation",
    "Rederiver",
    "heads",
    "mark_dependents",
    "walk",
]

DEFAULT_DEPTH = 3


class DependentsReader(Protocol):
    async def dependents(
        self, subject_id: str, fact_ids: Sequence[str]
    ) -> Mapping[str, Sequence[str]]:
        """For each of ``fact_ids``, the ids of the facts recorded as derived from it."""
        ...


async def walk(
    reader: DependentsReader, subject_id: str, roots: Sequence[str], *, depth: int = DEFAULT_DEPTH
) -> dict[str, int]:
    """Every fact derived from ``roots`` within ``depth`` hops, with its distance (1..depth).

    One read per hop; a cycle (which a well-formed store cannot hold) ends the walk.
    """
    found: dict[str, int] = {}
    seen = set(roots)
    frontier = list(dict.fromkeys(roots))
    for distance in range(1, depth + 1):
        if not frontier:
            break
        edges = await reader.dependents(subject_id, frontier)
        following: list[str] = []
        for source in frontier:
            for dependent in edges.get(source, ()):
                if dependent not in seen:
                    seen.add(dependent)
                    found[dependent] = distance
                    following.append(dependent)
        frontier = following
    return found


async def mark_dependents(
    dependents: DependentsReader,
    facts: FactReader,
    subject_id: str,
    retired: Sequence[str],
    *,
    depth: int = DEFAULT_DEPTH,
    written: Collection[str] = (),
) -> tuple[Fact, ...]:
    """Flagged copies of the current facts derived from ``retired`` (within ``depth``).

    Facts in ``written`` are left out (the same change writes them already), and
    so are facts already flagged: marking twice would publish a fact that did
    not change.
    """
    if not retired:
        return ()
    distances = await walk(dependents, subject_id, retired, depth=depth)
    wanted = [fact_id for fact_id in distances if fact_id not in written]
    if not wanted:
        return ()
    found = await facts.get_facts(subject_id, wanted)
    return tuple(
        fact.model_copy(update={"needs_revalidation": True})
        for fact in sorted(found, key=lambda f: (distances[f.fact_id], f.fact_id))
        if fact.status == "current" and not fact.needs_revalidation
    )


@dataclass(frozen=True, slots=True)
class Rederivation:
    """A verdict on a flagged derived fact, given its sources as they stand now.

    ``keep``: the claim still follows; ``rewrite``: it follows in the words of
    ``text``; ``unsure``: a human should decide. ``error`` is set when the model
    could not be asked (the fact stays flagged; the next pass asks again).
    """

    verdict: Literal["keep", "rewrite", "unsure"]
    text: str | None = None
    raw: str = ""
    error: str | None = None


class Rederiver(Protocol):
    async def rederive(self, derived: Fact, sources: Sequence[Fact]) -> Rederivation:
        """Whether ``derived`` still follows from ``sources`` (the current heads of the
        facts it was derived from; superseded sources replaced by their successors)."""
        ...


class OfflineRederiver:
    """Without a model nothing can be re-derived: every flagged fact goes to a human."""

    async def rederive(self, derived: Fact, sources: Sequence[Fact]) -> Rederivation:
        return Rederivation("unsure", raw="offline: no model configured to re-derive it")


def heads(facts: Mapping[str, Fact], sources: Sequence[str], *, max_hops: int = 64) -> list[Fact]:
    """The current head of each source's supersession chain (each once, in order)."""
    found: dict[str, Fact] = {}
    for source in sources:
        fact = facts.get(source)
        for _ in range(max_hops):
            successor = facts.get(fact.superseded_by or "") if fact is not None else None
            if fact is None or fact.status != "superseded" or successor is None:
                break
            fact = successor
        if fact is not None:
            found.setdefault(fact.fact_id, fact)
    return list(found.values())
