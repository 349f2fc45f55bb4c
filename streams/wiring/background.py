"""Wiring of the background jobs: their stores, the worker's handlers, the passes' models.

The worker gets, from :func:`open_background`: the review store and the
provenance index (:class:`Background`), the write path's observer that files
REVIEW items and derived links (``FollowUps.after_candidate``) and the guards of
the cascade (``processors.guards``); the command handlers are built in
``streams/commands/registry.py``. The passes (``slotwise consolidate``,
``slotwise reslot``) build their models with :func:`pass_models`: the same
``ModelClient`` and slot matcher the worker uses, or the offline ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from slotwise.models.llm import ModelClient
from slotwise.models.rederive import AnthropicRederiver
from slotwise.models.slot_filler import AnthropicSlotFiller
from slotwise.models.slot_matcher import AnthropicSlotMatcher
from slotwise.processors.ports import SlotMatcher
from slotwise.processors.provenance import OfflineRederiver, Rederiver
from slotwise.processors.reslot import RulesFiller, SlotFiller
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import OfflineSlotMatcher
from slotwise.sinks.redis.provenance import RedisProvenance
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.commands.apply import FollowUps
from slotwise.streams.config import Settings

__all__ = ["Background", "PassModels", "open_background", "pass_models"]


@dataclass(frozen=True, slots=True)
class Background:
    reviews: RedisReviews
    provenance: RedisProvenance

    @property
    def follow(self) -> FollowUps:
        return FollowUps(self.reviews, self.provenance)


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
        AnthropicSlotMatcher(client, schema, kind="consolidation"),
        AnthropicRederiver(client, schema),
        AnthropicSlotFiller(client, schema),
        True,
    )
