"""Wiring of the background jobs: their stores, the worker's handlers, the passes' models.

The worker gets, from :func:`open_background`: the review store and the
provenance index (:class:`Background`), the write path's observer that files
REVIEW items and derived links (``FollowUps.after_candidate``), the guards of
the cascade (``processors.guards``), and one handler per command kind
(``review``, ``consolidate``, ``reslot``). The passes (``slotwise consolidate``,
``slotwise reslot``) build their models with :func:`pass_models`: the same
``ModelClient`` and slot matcher the worker uses, or the offline ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from slotwise.models.llm import ModelClient
from slotwise.models.rederive import AnthropicRederiver
from slotwise.models.slot_filler import AnthropicSlotFiller
from slotwise.models.slot_matcher import AnthropicSlotMatcher
from slotwise.processors.guards import Resolver
from slotwise.processors.ports import SlotMatcher, StateStore, VectorSink
from slotwise.processors.provenance import OfflineRederiver, Rederiver
from slotwise.processors.reslot import RulesFiller, SlotFiller
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import OfflineSlotMatcher
from slotwise.sinks.redis.provenance import RedisProvenance
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.commands.apply import Applier, FollowUps
from slotwise.streams.commands.consolidate import ConsolidateHandler
from slotwise.streams.commands.review import ReviewHandler
from slotwise.streams.config import Settings
from slotwise.streams.passes.reslot import ReslotHandler
from slotwise.streams.runtime import clock
from slotwise.streams.write.path import CommandHandler
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import Command

__all__ = ["Background", "PassModels", "open_background", "pass_models", "unindexing_reviews"]


@dataclass(frozen=True, slots=True)
class Background:
    reviews: RedisReviews
    provenance: RedisProvenance

    @property
    def follow(self) -> FollowUps:
        return FollowUps(self.reviews, self.provenance)

    def handlers(
        self,
        store: StateStore,
        vectors: VectorSink,
        cascade: Resolver,
        schema: AttributeSchema,
        embedding_model: str | None,
    ) -> dict[str, CommandHandler]:
        """The worker's handlers of ``review``, ``consolidate`` and ``reslot`` commands."""
        applier = Applier(store, vectors, self.follow, clock.now)
        return {
            "review": ReviewHandler(applier, self.reviews, cascade, schema, embedding_model),
            "consolidate": ConsolidateHandler(applier, self.reviews, schema, embedding_model),
            "reslot": ReslotHandler(applier, self.reviews, schema),
        }


def unindexing_reviews(erase: CommandHandler, reviews: RedisReviews) -> CommandHandler:
    """The erase handler, then the subject's open items out of the deployment-wide review
    index (the erase deletes the subject's own keys; the index is not one of them).
    Idempotent, so a replayed erase does it again harmlessly."""

    async def handled(command: Command) -> tuple[Outbound, ...]:
        outputs = await erase(command)
        if command.fact_id is None and command.attribute is None:
            await reviews.forget_subject(command.subject_id)
        return outputs

    return handled


def open_background(settings: Settings, store: RedisStore) -> Background:
    """The background jobs' stores, on ``store``'s client and key names."""
    prefix = settings.redis_prefix
    return Background(RedisReviews(store, prefix=prefix), RedisProvenance(store, prefix=prefix))


@dataclass(frozen=True, slots=True)
class PassModels:
    """What a pass asks: the slot matcher, the re-deriver, the slot filler; ``model``
    says whether they cost model calls (False: the offline providers)."""

    matcher: SlotMatcher
    rederiver: Rederiver
    filler: SlotFiller
    model: bool


def pass_models(
    settings: Settings, schema: AttributeSchema, client: ModelClient | None
) -> PassModels:
    """The model's providers on ``client``, or the offline ones without one."""
    if client is None:
        return PassModels(
            OfflineSlotMatcher(settings.review_similarity),
            OfflineRederiver(),
            RulesFiller(schema),
            model=False,
        )
    return PassModels(
        AnthropicSlotMatcher(client), AnthropicRederiver(client), AnthropicSlotFiller(client), True
    )
