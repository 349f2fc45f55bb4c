"""The subject's stored facts in an extraction request, and each fact's answer about them.

A free-text fact finds its slot by a question of its own (``answer_slot``: which of
the subject's nearest stored facts records the same property), a second model call
re-reading the ~4,400-token prefix. When the worker reads the subject's current
facts before it extracts, the extraction call answers that question for every fact
it finds: the facts are listed, numbered, in the per-call part of the prompt (never
in the prefix every subject shares; a breakpoint of its own caches the listing for
the subject's next calls, until it changes), and each item's ``incumbent``
names one by its number or says NONE. The answer travels on the candidate
(``incumbent_match``); the worker checks it against the store where it decides
(:func:`processors.slot_match.extracted_answer`) and asks the slot question as
before when it no longer holds.

Only the call's own subject's facts are listed: a call reading several subjects'
turns (the extraction window never makes one) lists none and answers nothing.
The read happens where the subject's turns are extracted, in their order, and the
facts of its turns extracted before but not decided yet are listed too
(:class:`Incumbency`). What a call listed is written into its candidates, so a
decision depends on the log, not on when the read ran or what this process
remembered.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from prometheus_client import Counter

from slotwise.processors.slot_match import parse_answer
from slotwise.topics.records import Fact, IncumbentMatch, Observation

__all__ = ["ANSWERS", "CurrentFacts", "Incumbency", "Incumbents", "Listed"]

# A listed fact's text is cut here: it is billed at the full rate on every call.
_MAX_TEXT = 200

ANSWERS = Counter(
    "slotwise_llm_incumbent_answers_total",
    "Extracted free-text facts by what extraction answered about the listed stored facts",
    ["answer"],
)


class CurrentFacts(Protocol):
    async def facts(self, subject_id: str) -> list[Fact]:
        """The subject's current facts (the Redis store's :meth:`facts`)."""
        ...


@dataclass(frozen=True, slots=True)
class Listed:
    """A fact one extraction call lists: a stored one, or one its extraction emitted."""

    fact_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Incumbents:
    """The facts one extraction call lists, numbered from 1 in this order."""

    facts: tuple[Listed, ...]

    def render(self) -> str:
        """The listing that opens the per-call prompt, a block of its own ('' when nothing
        is listed)."""
        if not self.facts:
            return ""
        lines = (
            f"  {number}. {' '.join(fact.text.split())[:_MAX_TEXT]}"
            for number, fact in enumerate(self.facts, start=1)
        )
        return "Memories already stored about the user:\n" + "\n".join(lines) + "\n"

    def match(self, item: Any, siblings: Collection[str]) -> IncumbentMatch | None:
        """What the item answered, with what it was answered against, or None when it
        answered nothing usable (the worker then asks the slot question).

        ``siblings`` are the fact ids of the other candidates of the item's turn: the
        extraction stated them as distinct facts, so they are considered too.
        """
        considered = (*(f.fact_id for f in self.facts), *siblings)
        if not self.facts:
            # Nothing stored to restate: NONE is the only answer, asked or not.
            ANSWERS.labels("none").inc()
            return IncumbentMatch(fact_id=None, considered=considered)
        raw = item.get("incumbent") if isinstance(item, dict) else None
        if raw is None:
            ANSWERS.labels("missing").inc()
            return None
        try:
            index = parse_answer(raw, len(self.facts))
        except ValueError:
            ANSWERS.labels("rejected").inc()
            return None
        ANSWERS.labels("none" if index is None else "named").inc()
        named = None if index is None else self.facts[index].fact_id
        return IncumbentMatch(fact_id=named, considered=considered)


@dataclass(slots=True)
class _Order:
    """A subject's extraction calls, one at a time: the lock, and how many hold or want it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class Incumbency:
    """What each extraction call lists for its subject: the newest ``limit`` of the
    subject's current facts in the store and of the facts its earlier turns' candidates
    become.

    A subject's earlier turns were extracted in its order but may not be decided yet
    (their candidates wait on the candidates topic, a backlog's for minutes): a fact
    they will store would be a neighbour extraction never saw, and the slot question
    would be asked after all. So the facts this extractor emitted are listed too, under
    the ids their candidates will store them as; one that never gets stored (a
    restatement, a crash before the commit) is no neighbour of anything and costs
    nothing but its line. Kept for the ``subjects`` most recently extracted.
    """

    def __init__(self, store: CurrentFacts, limit: int, *, subjects: int = 4096) -> None:
        self._store = store
        self._limit = limit
        self._subjects = subjects
        self._emitted: OrderedDict[str, deque[Listed]] = OrderedDict()
        self._order: dict[str, _Order] = {}

    @asynccontextmanager
    async def extraction(
        self, observations: Sequence[Observation]
    ) -> AsyncIterator[Incumbents | None]:
        """One call's turns extracted in their subject's order: what to list for them
        (None: list nothing, answer nothing, when the listing is off or the turns are
        several subjects'), held until the call's facts are :meth:`emitted`.

        A subject's calls run one after another, in the order they were started (the
        log's): each lists what the ones before found. Under a backlog that costs a
        subject's turns their concurrency (the extraction window's calls of up to 8
        turns keep theirs); turns a few seconds apart, as people chat, never wait.
        """
        subjects = {o.subject_id for o in observations}
        if len(subjects) != 1 or self._limit < 1:
            yield None
            return
        subject = subjects.pop()
        turn = self._order.setdefault(subject, _Order())
        turn.users += 1
        try:
            async with turn.lock:
                yield await self._listed(subject)
        finally:
            turn.users -= 1
            if turn.users == 0:
                del self._order[subject]

    async def _listed(self, subject: str) -> Incumbents:
        current = await self._store.facts(subject)
        stored = [
            Listed(f.fact_id, f.text)
            for f in sorted(current, key=lambda f: (f.recorded_at, f.fact_id))
        ]
        known = {f.fact_id for f in stored}
        emitted = [f for f in self._emitted.get(subject, ()) if f.fact_id not in known]
        return Incumbents(tuple((stored + emitted)[-self._limit :]))

    def emitted(self, subject_id: str, facts: Sequence[Listed]) -> None:
        """Remember the facts a turn of ``subject_id`` was extracted into."""
        if self._limit < 1 or not facts:
            return
        kept = self._emitted.pop(subject_id, None) or deque(maxlen=self._limit)
        kept.extend(facts)
        self._emitted[subject_id] = kept
        while len(self._emitted) > self._subjects:
            self._emitted.popitem(last=False)
