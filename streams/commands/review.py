"""The ``review`` command: a human's accept, reject or edit of one open review item.

``slotwise review accept|reject|edit`` publishes the decision as a
``command/1`` on the candidates topic, keyed by the item's subject, so it is
ordered with the subject's writes. Applied here, at that place in the log
(:class:`~slotwise.streams.commands.apply.Applier`: idempotent by ``command_id``,
fenced by the subject's version):

* the item is read from the review store; an item resolved already, by this
  decision or another, is left as it is — each item is resolved once;
* the facts it names are read as they stand now, and
  :func:`slotwise.processors.review_policy.decide` says what the decision
  does; a held candidate whose incumbent changed meanwhile is decided again
  by the cascade (the same policy a new write meets), never applied blindly;
* the change and the item's resolution record (``review/1``, same
  ``review_id``, with ``status``) are written and published together; the
  follow-up files the record, which closes the item and remembers a
  rejection.
"""

from __future__ import annotations

from dataclasses import dataclass

from slotwise.processors.change import Change
from slotwise.processors.guards import Resolver
from slotwise.processors.ports import SubjectSnapshot
from slotwise.processors.resolve import fact_id_for
from slotwise.processors.review_policy import Redecide, ReviewState, after_redecision, decide
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.redis.review import RedisReviews
from slotwise.streams.commands.apply import Applier, MalformedCommand
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import Command, ReviewItem

__all__ = ["ReviewHandler"]


@dataclass(frozen=True, slots=True)
class ReviewHandler:
    applier: Applier
    reviews: RedisReviews
    cascade: Resolver
    schema: AttributeSchema
    embedding_model: str | None

    async def __call__(self, command: Command) -> tuple[Outbound, ...]:
        if command.review_id is None or command.action is None:
            raise MalformedCommand(
                f"review command {command.command_id} needs review_id and action"
            )
        if command.action == "edit" and command.value is None:
            raise MalformedCommand(f"review command {command.command_id}: an edit needs a value")

        async def decided(seen: SubjectSnapshot) -> Change:
            return await self._decide(command, seen)

        return await self.applier.run(command, decided)

    async def _decide(self, command: Command, seen: SubjectSnapshot) -> Change:
        review_id = command.review_id or ""
        item = await self.reviews.get(command.subject_id, review_id)
        if item is None:
            return Change("NOOP", f"review {review_id}: no such item of this subject")
        if item.status != "open":
            return Change("NOOP", f"review {review_id}: {item.status} already; nothing changed")
        now = self.applier.now()
        outcome = decide(
            item,
            command,
            await self._state(item, seen),
            self.schema,
            now=now,
            embedding_model=self.embedding_model,
        )
        if not isinstance(outcome, Redecide):
            return outcome
        resolution = await self.cascade.resolve(outcome.candidate, reader=seen)
        return after_redecision(item, command, outcome, resolution, now)

    async def _state(self, item: ReviewItem, seen: SubjectSnapshot) -> ReviewState:
        subject = item.subject_id
        own_id = fact_id_for(item.candidate)
        stored = await seen.get_facts(subject, [own_id, *item.incumbent_fact_ids])
        facts = {f.fact_id: f for f in stored}
        attribute = item.candidate.attribute
        slot = tuple(await seen.current_in_slot(subject, attribute)) if attribute else ()
        named = {i: facts[i] for i in item.incumbent_fact_ids if i in facts}
        return ReviewState(own=facts.get(own_id), named=named, slot=slot)
