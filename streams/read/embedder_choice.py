"""Which embedder a process runs when ``SLOTWISE_EMBEDDER`` does not say.

An explicit setting always wins. Unset, a store keeps the model it was built
with: the stamp of the collection behind the alias (``sinks/milvus/collections.py``)
names it, and a built-in model's stamp maps back to its setting
(``models.embedders.BUILT_IN_MODELS``). A store with no alias yet is new and
starts on :data:`~slotwise.models.embedders.DEFAULT_EMBEDDER`. So changing the
default never makes a running deployment's workers refuse their own index
(the index refuses a model it was not built with, ``sinks/milvus/space.py``);
moving a store to the new default is an embedding migration, which the log
line names. After ``migrate switch`` the alias names the new collection, and a
process restarted with the setting unset follows it; after ``rollback`` it
follows it back.

A collection stamped with a model no built-in setting makes (``st:<folder>``,
``openai:<model>``) cannot be embedded from its stamp alone: the setting must
say which embedder it is, and the process is refused with that in the message.
"""

from __future__ import annotations

import logging

from pymilvus import MilvusClient

from slotwise.models.embedders import (
    BUILT_IN_MODELS,
    DEFAULT_EMBEDDER,
    MiniLMEmbedder,
    embedder_named,
)
from slotwise.models.exceptions import EmbedderMisconfigured
from slotwise.processors.ports import Embedder
from slotwise.sinks.milvus.collections import GRPC_OPTIONS, collection_model
from slotwise.streams.config import Settings

__all__ = ["configured_embedder", "spec_for_stored", "store_embedder_spec", "stored_model"]

log = logging.getLogger(__name__)

_SPEC_OF_MODEL = {model: spec for spec, model in BUILT_IN_MODELS.items()}


def stored_model(settings: Settings) -> str | None:
    """The model stamp of the collection behind the alias; None when there is no alias yet.

    A collection created before stamps were written holds MiniLM's fp32 vectors: that was
    the only model then.
    """
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else ""
    client = MilvusClient(uri=settings.milvus_uri, token=token, grpc_options=GRPC_OPTIONS)
    try:
        if settings.milvus_alias not in client.list_aliases().get("aliases", []):
            return None
        name = str(client.describe_alias(settings.milvus_alias)["collection_name"])
        return collection_model(client, name) or MiniLMEmbedder.model_name
    finally:
        client.close()


def spec_for_stored(model: str, alias: str) -> str:
    """The built-in setting that embeds ``model``'s vectors (the stamp behind ``alias``)."""
    spec = _SPEC_OF_MODEL.get(model)
    if spec is None:
        raise EmbedderMisconfigured(
            f"{alias} holds vectors of {model}, which no built-in embedder makes: set "
            "SLOTWISE_EMBEDDER to the embedder that built it (st:<folder>, "
            "openai:<model>[:<dimension>])"
        )
    return spec


def store_embedder_spec(settings: Settings) -> str:
    """The embedder setting this deployment's processes run (blocks: one Milvus round trip)."""
    if settings.embedder is not None:
        return settings.embedder
    model = stored_model(settings)
    if model is None:
        return DEFAULT_EMBEDDER
    spec = spec_for_stored(model, settings.milvus_alias)
    if spec != DEFAULT_EMBEDDER:
        log.warning(
            "embedding with %s, the model %s was built with; %s (%s) costs about half the "
            "CPU a text. To move this store: slotwise migrate start --to %s, then migrate "
            "backfill, validate and switch, and restart the workers "
            "(docs: Embedding-model upgrades)",
            spec,
            settings.milvus_alias,
            DEFAULT_EMBEDDER,
            BUILT_IN_MODELS[DEFAULT_EMBEDDER],
            DEFAULT_EMBEDDER,
        )
    return spec


def configured_embedder(settings: Settings) -> Embedder:
    """The embedder :func:`store_embedder_spec` names, loaded (blocks)."""
    return embedder_named(store_embedder_spec(settings))
