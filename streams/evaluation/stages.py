"""The stages the evaluation runs, built from the settings as the worker builds them."""

from __future__ import annotations

from slotwise.models.embedders import DEFAULT_EMBEDDER, embedder_named
from slotwise.processors.extract import RulesExtractor
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import OfflineSlotMatcher
from slotwise.streams.config import Settings
from slotwise.streams.evaluation.offline import Stages

__all__ = ["configured_stages"]


def configured_stages(settings: Settings) -> Stages:
    """The rules extractor and the NONE matcher offline; the model's when a key is set.

    The embedder is the one a new store starts with (``SLOTWISE_EMBEDDER``, else the
    default): the evaluation has no store of its own to follow.
    """
    schema = AttributeSchema.load()
    embedder = embedder_named(settings.embedder or DEFAULT_EMBEDDER)
    if settings.offline:
        return Stages(
            schema=schema,
            extractor=RulesExtractor(schema, embedder),
            matcher=OfflineSlotMatcher(settings.review_similarity),
            matcher_label="offline",
            embedder=embedder,
            description=f"offline (rules extractor, NONE matcher, {embedder.model_name})",
        )
    from slotwise.models.extractor import AnthropicExtractor  # noqa: PLC0415 - the SDK loads only here
    from slotwise.models.slot_matcher import AnthropicSlotMatcher  # noqa: PLC0415
    from slotwise.streams.wiring.app import model_client  # noqa: PLC0415

    client = model_client(settings)
    matcher = AnthropicSlotMatcher(client, schema)
    return Stages(
        schema=schema,
        extractor=AnthropicExtractor(client, schema),
        matcher=matcher,
        matcher_label="llm",
        embedder=embedder,
        reranker=matcher,
        description=f"model {settings.llm_model}",
    )
