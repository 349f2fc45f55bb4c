"""One settings model for every slotwise process, read from ``SLOTWISE_*`` variables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from topics.catalogue import Catalogue

__all__ = ["GroupProtocol", "Settings", "default_data_dir"]


GroupProtocol = Literal["consumer", "classic"]


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "slotwise"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLOTWISE_", frozen=True, extra="ignore")

    # services
    kafka_bootstrap: str = "127.0.0.1:9092"
    redis_url: str = "redis://127.0.0.1:6379/0"
    milvus_uri: str = "http://127.0.0.1:19530"
    milvus_token: SecretStr | None = None
    data_dir: Path = Field(default_factory=default_data_dir)
    redis_prefix: str = "sw"
    milvus_alias: str = "facts_current"
    milvus_collection_prefix: str = "facts"

    # topics
    topic_prefix: str = "slotwise"
    partitions: int = Field(12, ge=1)
    replication_factor: int = Field(1, ge=1)

    # worker
    group_id: str = "slotwise-worker"
    transactional_id: str | None = None
    static_membership: bool = True  # the classic protocol's only (see streams.worker)
    # "classic": cooperative-sticky with static membership. "consumer" (KIP-848, brokers
    # from Kafka 4.0) spreads each topic evenly but is not the default yet (deploy/README).
    group_protocol: GroupProtocol = "classic"
    # The classic protocol's session timeout; with "consumer" the broker's
    # group.consumer.session.timeout.ms (or the group's own setting) applies.
    session_timeout_ms: int = Field(15_000, ge=1_000)
    max_in_flight: int = Field(1000, ge=1)
    commit_interval_ms: int = Field(200, ge=10)
    max_message_bytes: int = 1024 * 1024
    max_text_bytes: int = 64 * 1024
    metrics_port: int = 9464
    # Loopback unless told: /metrics is unauthenticated. Containers set 0.0.0.0.
    metrics_host: str = "127.0.0.1"
    shutdown_timeout_s: float = 30.0

    # matching
    top_k: int = Field(5, ge=1, le=20)
    vector_floor: float = Field(0.15, ge=-1.0, le=1.0)
    review_similarity: float = Field(0.85, ge=0.0, le=1.0)
    milvus_flush_every: int = Field(250, ge=1)

    # models
    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    llm_model: str = "claude-haiku-4-5"
    llm_max_concurrency: int = Field(32, ge=1)
    llm_timeout_s: float = 20.0
    llm_max_retries: int = Field(4, ge=0)
    embedder: str = "minilm"

    @property
    def offline(self) -> bool:
        """No API key: the rules extractor and the NONE-answering slot matcher run."""
        return self.anthropic_api_key is None

    def catalogue(self) -> Catalogue:
        return Catalogue(prefix=self.topic_prefix, partitions=self.partitions)
