"""The ``reslot`` command: a free-text fact moved into the slot a vocabulary version added.

Applied at its place in the subject's log through the :class:`Applier`: a fact
that changed since the pass read it is dropped (its fingerprint differs); a
match moves the fact into the slot in place, by the policy against what the
slot holds (``processors.pairs.place``); an ambiguous answer opens a review
item; a human's earlier rejection of the same question is honoured.
"""

from __future__ import annotations

from dataclasses import dataclass

from slotwise.processors.change import Change, fingerprint
from slotwise.processors.pairs import place
from slotwise.processors.ports import SubjectSnapshot
from slotwise.processors.reslot import reslot_review_id
from slotwise.processors.review_policy import reslot_key
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.redis.review import RedisReviews
from slotwise.streams.commands.apply import Applier, MalformedCommand
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import Command, ReviewItem

__all__ = ["ReslotHandler"]


@dataclass(frozen=True, slots=True)
class ReslotHandler:
    applier: Applier
    reviews: RedisReviews
    schema: AttributeSchema

    async def __call__(self, command: Command) -> tuple[Outbound, ...]:
        candidate = command.candidate
        if candidate is None or candidate.attribute is None or len(command.fact_ids) != 1:
            raise MalformedCommand(
                f"reslot command {command.command_id} needs a candidate and one fact id"
            )

        async def decided(seen: SubjectSnapshot) -> Change:
            return await self._decide(command, seen)

        return await self.applier.run(command, decided)

    async def _decide(self, command: Command, seen: SubjectSnapshot) -> Change:
        candidate = command.candidate
        assert candidate is not None and candidate.attribute is not None  # checked above
        subject, attribute = command.subject_id, candidate.attribute
        (fact_id,) = command.fact_ids
        stored = await seen.get_facts(subject, [fact_id])
        fact = stored[0] if stored else None
        if fact is None or fingerprint(fact) != command.params.get("fingerprint"):
            return Change("DROPPED", f"reslot: {fact_id} changed since the pass read it")
        spec = self.schema.get(attribute)
        if spec is None:
            return Change("DROPPED", f"reslot: this worker's vocabulary has no {attribute!r}")
        review_id = reslot_review_id(fact_id, attribute)
        if await self.reviews.rejected(subject, [reslot_key(fact_id, attribute)]):
            return Change("NOOP", f"reslot: a human rejected {fact_id} as {attribute} before")
        if await self.reviews.get(subject, review_id) is not None:
            return Change("NOOP", f"reslot: review {review_id} holds this question already")
        if command.params.get("ambiguous") or candidate.value is None:
            item = ReviewItem(
                review_id=review_id,
                subject_id=subject,
                kind="ambiguous",
                reason=f"reslot: may {fact.text!r} fill {attribute}? {command.reason or ''}",
                candidate=candidate,
                incumbent_fact_ids=(fact_id,),
                created_at=self.applier.now(),
                origin="reslot",
            )
            return Change("REVIEW", item.reason, reviews=(item,))
        slot = await seen.current_in_slot(subject, attribute)
        return place(fact, spec, candidate.value, slot, now=self.applier.now(), review_id=review_id)
