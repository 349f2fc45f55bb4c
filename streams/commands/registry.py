"""Every command kind the worker applies from a subject's log, and its handler: one place.

A ``command/1`` record on the candidates topic names its kind; the write path
looks the kind up here (``WritePath.commands``) and a kind with no handler is
dead-lettered as unsupported. The handlers are built by the command modules
beside this one; this module only says which kind each one answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from slotwise.processors.guards import Resolver
from slotwise.processors.ports import StateStore, VectorSink
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.redis.provenance import RedisProvenance
from slotwise.sinks.redis.review import RedisReviews
from slotwise.streams.commands.apply import Applier, FollowUps
from slotwise.streams.commands.consolidate import ConsolidateHandler
from slotwise.streams.commands.forget import Forgetting
from slotwise.streams.commands.reslot import ReslotHandler
from slotwise.streams.commands.review import ReviewHandler
from slotwise.streams.runtime import clock
from slotwise.streams.write.path import CommandHandler
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import Command

__all__ = ["CommandDeps", "command_handlers"]


@dataclass(frozen=True, slots=True)
class CommandDeps:
    """What the handlers share: the subject's state, its vectors, the cascade."""

    store: StateStore
    vectors: VectorSink
    cascade: Resolver
    schema: AttributeSchema
    embedding_model: str | None
    reviews: RedisReviews
    provenance: RedisProvenance


def command_handlers(
    deps: CommandDeps, *, erase: CommandHandler, forgetting: Forgetting
) -> Mapping[str, CommandHandler]:
    """One handler per kind (the watermark is the write path's own: read-your-writes)."""
    applier = Applier(deps.store, deps.vectors, FollowUps(deps.reviews, deps.provenance), clock.now)
    return {
        "erase": _unindexing_reviews(erase, deps.reviews),
        "forget": forgetting.forget,
        "restore": forgetting.restore,
        "review": ReviewHandler(
            applier, deps.reviews, deps.cascade, deps.schema, deps.embedding_model
        ),
        "consolidate": ConsolidateHandler(applier, deps.reviews, deps.schema, deps.embedding_model),
        "reslot": ReslotHandler(applier, deps.reviews, deps.schema),
    }


def _unindexing_reviews(erase: CommandHandler, reviews: RedisReviews) -> CommandHandler:
    """The erase handler, then the subject's open items out of the deployment-wide review
    index (the erase deletes the subject's own keys; the index is not one of them).
    Idempotent, so a replayed erase does it again harmlessly."""

    async def handled(command: Command) -> tuple[Outbound, ...]:
        outputs = await erase(command)
        if command.fact_id is None and command.attribute is None:
            await reviews.forget_subject(command.subject_id)
        return outputs

    return handled
