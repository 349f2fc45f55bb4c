"""The matching cascade: exact and cheap first, fuzzy for the tail.

As “A contradiction is only visible when memories share a key” argues:

A stage with no false positives runs before one with some, because the later
stage can only add errors to what the earlier one got right:

0. the candidate's fact already exists → NOOP, nothing written (a redelivery);
1. attribute in the schema → exact key join → the policy (``decided_by`` "exact");
2. otherwise → the subject's nearest current facts (``vector_fetch``); none → ADD
   (``decided_by`` "vector"); offline, one that the candidate restates (cosine ≥ 0.9 and
   the same content words) → NOOP, re-confirming it (``decided_by`` "vector");
3. → one slot-match question; a neighbour → the policy against that neighbour
   (``decided_by`` "llm", or "offline" for the matcher that runs without a model);
   NONE → ADD; a close pair → ADD *and* REVIEW; a model failure → REVIEW with
   nothing written. Extraction's own answer to the question, when the candidate
   carries one that still covers its neighbours, is used instead of asking
   (``slot_match.extracted_answer``; ``decided_by`` "llm").

Every ``Resolution.reason`` starts with the name of the stage that decided.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Literal

from slotwise.processors.corrected import Corrected, corrected
from slotwise.processors.defaults import DEFAULT_TOP_K, DEFAULT_VECTOR_FLOOR
from slotwise.processors.exact_join import exact_join
from slotwise.processors.model import (
    ERASURE_QUESTION,
    Decision,
    Neighbour,
    Resolution,
    SlotAnswer,
    stable_id,
)
from slotwise.processors.ports import FactReader, SlotMatcher, VectorSearch
from slotwise.processors.resolve import (
    fact_id_for,
    new_fact,
    reconfirm,
    resolve,
    vector_row,
)
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import extracted_answer
from slotwise.processors.vector_fetch import vector_fetch
from slotwise.processors.zone_moves import implied_zone_comparable
from slotwise.topics.records import CandidateFact, DecidedBy, Fact, ReviewItem

ReviewKind = Literal["close_neighbour", "model_failure"]

__all__ = [
    "DEFAULT_TOP_K",
    "DEFAULT_VECTOR_FLOOR",
    "RESTATEMENT_COSINE",
    "Cascade",
    "restates",
]


class Cascade:
    """Resolves one candidate against the store; reads only, writes nothing.

    ``dropped`` counts vector hits discarded before the matcher saw them, by
    reason (see ``slotwise.processors.vector_fetch.DROP_REASONS``): export it as a metric.
    ``extracted`` is told what became of each extraction's answer (one of
    ``slot_match.FOLD_OUTCOMES``).
    """

    def __init__(
        self,
        schema: AttributeSchema,
        reader: FactReader,
        search: VectorSearch,
        matcher: SlotMatcher,
        *,
        top_k: int = DEFAULT_TOP_K,
        floor: float = DEFAULT_VECTOR_FLOOR,
        now: Callable[[], datetime],
        embedding_model: str | None,
        matcher_label: DecidedBy = "llm",
        extracted: Callable[[str], None] = lambda outcome: None,
    ) -> None:
        self._schema = schema
        self._reader = reader
        self._search = search
        self._matcher = matcher
        self._top_k = top_k
        self._floor = floor
        self._now = now
        self._embedding_model = embedding_model
        # Who answers the slot question, as events, reasons and metrics name it: a
        # dashboard must not suggest a model runs when the offline matcher does.
        self._label: DecidedBy = matcher_label
        self._extracted = extracted
        self.dropped: Counter[str] = Counter()

    async def resolve(
        self, candidate: CandidateFact, *, reader: FactReader | None = None
    ) -> Resolution:
        """Decide ``candidate``; ``reader`` replaces the cascade's own for this one call.

        The write path passes what it already read about the subject, so the
        exact path costs no further round trip.
        """
        reader = reader or self._reader
        # One clock read per candidate: every record it produces carries the same instant.
        now = self._now()
        own = fact_id_for(candidate)
        if await reader.get_facts(candidate.subject_id, [own]):
            # A redelivery after the write landed; resolving it again against the newer
            # state would rewrite its own, since retired, record as something else.
            return Resolution(
                decision=Decision.NOOP,
                candidate=candidate,
                reason=f"replay: fact {own} already stored; nothing to write",
                decided_by="replay",
            )
        spec = self._schema.get(candidate.attribute)
        if candidate.question is not None:
            return await self._ask(candidate, reader, now)
        if spec is not None:
            incumbents = await exact_join(reader, candidate)
            return resolve(
                candidate,
                spec,
                incumbents,
                decided_by="exact",
                now=now,
                embedding_model=self._embedding_model,
            )
        neighbours = await vector_fetch(
            self._search,
            reader,
            candidate,
            k=self._top_k,
            floor=self._floor,
            dropped=self.dropped,
        )
        if not neighbours:
            return self._add(
                candidate,
                now,
                "vector",
                f"vector: no current fact of the subject at cosine >= {self._floor:.2f}",
            )
        # Offline nobody else can tell a restatement from a new fact (the matcher answers
        # NONE); a model is asked, and the policy then finds the same text a NOOP.
        restated = (
            next((n for n in neighbours if restates(candidate.text, n)), None)
            if self._label == "offline"
            else None
        )
        if restated is not None:
            resolution = reconfirm(
                candidate,
                restated.fact,
                decided_by="policy",
                now=now,
                embedding_model=self._embedding_model,
            )
            return replace(resolution, reason=f"vector: {resolution.reason}", decided_by="vector")
        answer, outcome = extracted_answer(candidate, neighbours)
        if outcome is not None:
            self._extracted(outcome)
        if answer is not None:
            # The model answered in the extraction call: it decided, as "llm".
            return self._answered(candidate, neighbours, answer, now, "llm")
        answer = await self._matcher.match(candidate, neighbours)
        return self._answered(candidate, neighbours, answer, now, self._label)

    def _answered(
        self,
        candidate: CandidateFact,
        neighbours: Sequence[Neighbour],
        answer: SlotAnswer,
        now: datetime,
        label: DecidedBy,
    ) -> Resolution:
        if answer.error is not None:
            reason = f"{label}: slot match failed ({answer.error}); nothing written"
            return Resolution(
                decision=Decision.REVIEW,
                candidate=candidate,
                reason=reason,
                decided_by=label,
                review=_review(candidate, neighbours, "model_failure", reason, now),
            )
        # The adapter validates the number; a bad index here still must change nothing.
        if answer.index is not None and 0 <= answer.index < len(neighbours):
            incumbent = neighbours[answer.index].fact
            return resolve(
                candidate,
                self._schema.get(incumbent.attribute),
                [incumbent],
                decided_by=label,
                now=now,
                embedding_model=self._embedding_model,
            )
        if answer.review_reason is not None:
            # A close pair the matcher would not decide: keep both truths, ask a human.
            reason = f"{label}: no match decided; both kept; review: {answer.review_reason}"
            added = self._add(candidate, now, label, reason)
            return Resolution(
                decision=Decision.REVIEW,
                candidate=candidate,
                reason=reason,
                decided_by=label,
                facts=added.facts,
                vector_rows=added.vector_rows,
                review=_review(candidate, neighbours, "close_neighbour", reason, now),
            )
        shown = "NONE" if answer.index is None else f"rejected index {answer.index}"
        return self._add(
            candidate,
            now,
            label,
            f"{label}: {shown} among {len(neighbours)} neighbours (raw {answer.raw[:80]!r}); added",
        )

    async def _ask(self, candidate: CandidateFact, reader: FactReader, now: datetime) -> Resolution:
        """A candidate the reader could not decide: a human is asked, nothing is written.
        About a slot, only while the slot holds a current fact (there is something the
        turn may have changed); about no slot (a deletion it could not scope), always."""
        held: tuple[str, ...] = ()
        if candidate.attribute is None:
            slotted = await self._slotted(candidate.subject_id, reader)
            swap = corrected(candidate, slotted, self._schema)
            if swap is not None and not swap.many:
                return await self._correct(candidate, swap, reader, now)
            named = [swap.held] if swap is not None else _named(candidate, slotted)
            held = tuple(f.fact_id for f in named)
            if not held and candidate.category != ERASURE_QUESTION:
                return Resolution(
                    decision=Decision.NOOP,
                    candidate=candidate,
                    reason="reader: the turn names no value the subject holds; nothing to ask",
                    decided_by="policy",
                )
        else:
            incumbents = await exact_join(reader, candidate)
            current = [f for f in incumbents if f.status == "current"]
            held = tuple(f.fact_id for f in current)
            if not held:
                return Resolution(
                    decision=Decision.NOOP,
                    candidate=candidate,
                    reason=f"reader: unsure about {candidate.attribute}, which holds no "
                    "current fact; nothing to ask",
                    decided_by="policy",
                )
            if implied_zone_comparable(candidate, current):
                # A move to a city whose IANA zone is known, against held IANA zones: the
                # comparison is exact, so the policy decides (same zone: re-confirmed;
                # another: the held zone went stale with the move).
                stated = candidate.model_copy(update={"question": None})
                return resolve(
                    stated,
                    self._schema.get(candidate.attribute),
                    incumbents,
                    decided_by="exact",
                    now=now,
                    embedding_model=self._embedding_model,
                )
        reason = f"reader: {candidate.question}; a human decides"
        return Resolution(
            decision=Decision.REVIEW,
            candidate=candidate,
            reason=reason,
            decided_by="policy",
            review=ReviewItem(
                schema="review/1",
                review_id=stable_id("review", candidate.candidate_id),
                subject_id=candidate.subject_id,
                kind="ambiguous",
                reason=reason,
                candidate=candidate,
                incumbent_fact_ids=held,
                created_at=now,
            ),
        )

    async def _slotted(self, subject_id: str, reader: FactReader) -> list[Fact]:
        """The subject's current facts in every slot of the schema."""
        return [
            fact
            for spec in self._schema
            for fact in await reader.current_in_slot(subject_id, spec.name)
        ]

    async def _correct(
        self, candidate: CandidateFact, swap: Corrected, reader: FactReader, now: datetime
    ) -> Resolution:
        """A correction the reader read as a swap of words: the corrected value, stated as a
        change of the held fact's slot, through the policy like any other."""
        attribute = swap.held.attribute
        assert attribute is not None  # corrected() only names slotted facts
        spec = self._schema.get(attribute)
        stated = candidate.model_copy(
            update={
                "question": None,
                "attribute": attribute,
                "value": swap.value,
                "category": spec.category if spec is not None else candidate.category,
                "text": f"User's {attribute.replace('_', ' ')} is {swap.value} "
                f"(corrected from {swap.held.value}).",
                "stated_change": True,
                # As sure as the statement it corrects: the speaker said it outright.
                "confidence": swap.held.confidence,
            }
        )
        return resolve(
            stated,
            spec,
            await exact_join(reader, stated),
            decided_by="exact",
            now=now,
            embedding_model=self._embedding_model,
        )

    def _add(
        self, candidate: CandidateFact, now: datetime, decided_by: str, reason: str
    ) -> Resolution:
        fact = new_fact(candidate, None, now=now, embedding_model=self._embedding_model)
        return Resolution(
            decision=Decision.ADD,
            candidate=candidate,
            reason=reason,
            decided_by=decided_by,
            facts=(fact,),
            vector_rows=(vector_row(fact),),
        )


# A free-text candidate this close to a current fact, with the same content words, says
# what that fact says: re-confirming it is right, storing it again piles up duplicates.
RESTATEMENT_COSINE = 0.9
_FILLER_WORDS = frozenset(
    "user user's the a an is are was were be been has have had their they them to of in on at "
    "for and with again also just now still really very so some this that it its".split()
)


def _named(candidate: CandidateFact, slotted: Sequence[Fact]) -> list[Fact]:
    """The facts whose value the candidate's text names ("Portland not Portsmouth" names
    the held Portsmouth)."""
    said = candidate.text.casefold()
    named: list[Fact] = []
    for fact in slotted:
        value = str(fact.value).casefold() if fact.value is not None else ""
        if len(value) >= 3 and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", said):
            named.append(fact)
    return named


def _content(text: str) -> frozenset[str]:
    words = re.findall(r"[\w'-]+", text.casefold())
    return frozenset(w for w in words if w not in _FILLER_WORDS)


def restates(text: str, neighbour: Neighbour) -> bool:
    """``text`` restates the neighbour: very high similarity and the same content words."""
    return neighbour.similarity >= RESTATEMENT_COSINE and _content(text) == _content(
        neighbour.fact.text
    )


def _review(
    candidate: CandidateFact,
    neighbours: Sequence[Neighbour],
    kind: ReviewKind,
    reason: str,
    now: datetime,
) -> ReviewItem:
    return ReviewItem(
        schema="review/1",
        review_id=stable_id("review", candidate.candidate_id),
        subject_id=candidate.subject_id,
        kind=kind,
        reason=reason,
        candidate=candidate,
        incumbent_fact_ids=tuple(n.fact.fact_id for n in neighbours),
        created_at=now,
    )
