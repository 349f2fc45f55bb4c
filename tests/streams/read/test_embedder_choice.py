"""Which embedder a process runs: the setting if given, else its store's model, else the default.

Against the stack's Milvus: a collection stamped with a model behind a fresh alias
is a store built with that model.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator

import pytest
from pymilvus import MilvusClient

from slotwise.models.embedders import DEFAULT_EMBEDDER, DEFAULT_MODEL, MiniLMEmbedder
from slotwise.models.exceptions import EmbedderMisconfigured
from slotwise.sinks.milvus.collections import GRPC_OPTIONS, create_collection
from slotwise.streams.config import Settings
from slotwise.streams.read.embedder_choice import store_embedder_spec

pytestmark = [pytest.mark.milvus]

Built = Callable[[str], Settings]


@pytest.fixture
def built_with(stack: Settings) -> Iterator[Built]:
    """``built_with(model) -> Settings``: a store whose alias names a collection of ``model``."""
    client = MilvusClient(uri=stack.milvus_uri, grpc_options=GRPC_OPTIONS)
    made: list[tuple[str, str]] = []

    def build(model: str) -> Settings:
        prefix = f"t{uuid.uuid4().hex[:10]}"
        name, alias = f"{prefix}_facts", f"{prefix}_current"
        create_collection(client, name, model=model, dimension=384, timeout_s=30)
        client.create_alias(name, alias)
        made.append((alias, name))
        return _unset(stack, alias)

    yield build
    for alias, name in made:
        client.drop_alias(alias)
        client.drop_collection(name)
    client.close()


def _unset(stack: Settings, alias: str, embedder: str | None = None) -> Settings:
    return stack.model_copy(update={"milvus_alias": alias, "embedder": embedder})


def test_a_new_store_starts_on_the_default(stack: Settings) -> None:
    fresh = _unset(stack, f"t{uuid.uuid4().hex[:10]}_current")
    assert store_embedder_spec(fresh) == DEFAULT_EMBEDDER


def test_a_store_built_on_candle_keeps_it_and_says_how_to_move(
    built_with: Built, caplog: pytest.LogCaptureFixture
) -> None:
    settings = built_with(MiniLMEmbedder.model_name)
    with caplog.at_level(logging.WARNING, logger="slotwise.streams.read.embedder_choice"):
        assert store_embedder_spec(settings) == "minilm"
    (hint,) = caplog.messages
    assert f"slotwise migrate start --to {DEFAULT_EMBEDDER}" in hint
    assert settings.milvus_alias in hint


def test_a_store_on_the_default_runs_it_quietly(
    built_with: Built, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert store_embedder_spec(built_with(DEFAULT_MODEL)) == DEFAULT_EMBEDDER
    assert not caplog.messages


def test_the_setting_wins_over_the_store(built_with: Built) -> None:
    settings = built_with(MiniLMEmbedder.model_name)
    chosen = settings.model_copy(update={"embedder": DEFAULT_EMBEDDER})
    assert store_embedder_spec(chosen) == DEFAULT_EMBEDDER


def test_a_store_of_a_model_no_setting_names_asks_for_the_setting(built_with: Built) -> None:
    settings = built_with("all-mpnet-base-v2")
    with pytest.raises(EmbedderMisconfigured, match="set SLOTWISE_EMBEDDER") as refused:
        store_embedder_spec(settings)
    assert "all-mpnet-base-v2" in str(refused.value)
