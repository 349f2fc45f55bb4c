"""The settings of every slotwise process, read from ``SLOTWISE_*`` variables.

They come in typed groups (Kafka, Redis, Milvus, model, matching, worker, API;
forgetting has its own ``SLOTWISE_FORGET_*`` group beside the command) that
:class:`Settings` composes; a variable keeps its name whichever group holds it.

A *namespace* (``SLOTWISE_NAMESPACE``) names one deployment's resources at once:
its topic prefix, Redis key prefix, Milvus collection prefix and alias, and
consumer group. Two deployments given different namespaces share a broker, a
Redis and a Milvus without seeing each other's data. Each derived name can
still be set on its own; without a namespace they keep their historical
defaults (``slotwise.*`` topics, ``sw:`` keys, ``facts_*`` collections behind
``facts_current``, group ``slotwise-worker``).
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from slotwise.processors.defaults import DEFAULT_TOP_K, DEFAULT_VECTOR_FLOOR
from slotwise.processors.forgetting import ForgetPolicy, HalfLives
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.catalogue import Catalogue

__all__ = [
    "ApiSettings",
    "ForgetSettings",
    "GroupProtocol",
    "KafkaSettings",
    "LlmProvider",
    "MatchingSettings",
    "MilvusSettings",
    "ModelSettings",
    "RedisSettings",
    "Settings",
    "WorkerSettings",
    "default_data_dir",
]


GroupProtocol = Literal["consumer", "classic"]
# "anthropic": the model extracts and matches; "offline": the rules extractor and the
# NONE-answering matcher, deterministic and free.
LlmProvider = Literal["anthropic", "offline"]
# Topics allow dots and dashes, Milvus names only letters, digits and underscores:
# a namespace is what all of them accept once dashes become underscores.
_NAMESPACE = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "slotwise"


_CONFIG = SettingsConfigDict(env_prefix="SLOTWISE_", frozen=True, extra="ignore")


class KafkaSettings(BaseSettings):
    """The brokers, their security, and the topic catalogue's names and sizes."""

    model_config = _CONFIG

    kafka_bootstrap: str = "127.0.0.1:9092"
    # librdkafka's security settings, for a cluster that needs them (deploy/README.md)
    kafka_security_protocol: str | None = None
    kafka_sasl_mechanism: str | None = None
    kafka_sasl_username: str | None = None
    kafka_sasl_password: SecretStr | None = None
    # The CA file (PEM) that signed the brokers' certificates, for an SSL or SASL_SSL
    # listener whose CA the system store does not hold (`slotwise stack up --secure`)
    kafka_ssl_ca_location: Path | None = None
    topic_prefix: str = "slotwise"
    partitions: int = Field(12, ge=1)
    # Replicas of each topic slotwise creates; unset: the brokers' default.replication.factor
    # (1 on the single local broker, 3 on `slotwise stack up --brokers 3` and in deploy/)
    replication_factor: int | None = Field(None, ge=1)

    def catalogue(self) -> Catalogue:
        return Catalogue(prefix=self.topic_prefix, partitions=self.partitions)

    def librdkafka(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The librdkafka configuration every Kafka client of slotwise starts from: the
        brokers and their security, then the client's own ``extra`` dotted keys."""
        config: dict[str, Any] = {"bootstrap.servers": self.kafka_bootstrap}
        optional = {
            "security.protocol": self.kafka_security_protocol,
            "sasl.mechanism": self.kafka_sasl_mechanism,
            "sasl.username": self.kafka_sasl_username,
            "sasl.password": (
                self.kafka_sasl_password.get_secret_value() if self.kafka_sasl_password else None
            ),
            "ssl.ca.location": str(self.kafka_ssl_ca_location)
            if self.kafka_ssl_ca_location
            else None,
        }
        config.update({key: value for key, value in optional.items() if value is not None})
        return {**config, **(extra or {})}


class RedisSettings(BaseSettings):
    """The state store: where it is, its key prefix, and what a commit waits for."""

    model_config = _CONFIG

    redis_url: str = "redis://127.0.0.1:6379/0"
    # "host:port,host:port": reach the primary the Sentinels name for redis_sentinel_master
    # and follow a failover (sinks/redis/connect.py); the URL then gives db, user, password
    redis_sentinels: str | None = None
    redis_sentinel_master: str = "slotwise"
    redis_prefix: str = "sw"
    # Replicas that must hold a commit's Redis writes before its Kafka transaction commits
    # (WAIT, sinks/redis/replicas.py): 0 locally, 1 in deploy/. A WAIT that times out holds
    # the commit and tries again.
    redis_min_replicas: int = Field(0, ge=0)
    redis_wait_timeout_ms: int = Field(1000, ge=1)

    def sentinel_addresses(self) -> list[tuple[str, int]]:
        """``redis_sentinels`` as (host, port) pairs; a bare host means port 26379."""
        found = []
        for item in (part.strip() for part in (self.redis_sentinels or "").split(",")):
            if item:
                host, colon, port = item.rpartition(":")
                found.append((host, int(port)) if colon else (item, 26379))
        return found


class MilvusSettings(BaseSettings):
    """The vector index: where it is, its collections' names, how often it flushes."""

    model_config = _CONFIG

    milvus_uri: str = "http://127.0.0.1:19530"
    milvus_token: SecretStr | None = None
    # What `slotwise stack up` starts when nothing answers at milvus_uri and no --milvus
    # flag is given: "lite" (Milvus Lite) or "server" (PyPI's milvus standalone server)
    stack_milvus: Literal["lite", "server"] = "lite"
    milvus_alias: str = "facts_current"
    milvus_collection_prefix: str = "facts"
    milvus_flush_every: int = Field(250, ge=1)
    # How often a process re-reads the migration record (dual-writing on or off).
    migration_poll_s: float = Field(5.0, gt=0)


class ModelSettings(BaseSettings):
    """The providers: which one extracts and matches, its client's limits, the embedder."""

    model_config = _CONFIG

    # Which provider extracts and matches. Unset, it follows the key as it always did:
    # "anthropic" with an API key, "offline" without one. Set, it is what runs, and
    # "anthropic" without a key is refused at start rather than silently offline.
    llm: LlmProvider | None = None
    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    llm_model: str = "claude-haiku-4-5"
    llm_max_concurrency: int = Field(32, ge=1)
    llm_timeout_s: float = 20.0
    llm_max_retries: int = Field(4, ge=0)
    # Turns that state nothing about their speaker skip the extraction call
    # (processors/gate.py; its recall on the labelled fact-bearing turns is >= 0.99).
    extract_gate: bool = True
    # A subject's turns of one session observed in the same window of this many ms, and
    # fetched together, are extracted in one call (streams/write/extract_window.py); 0: a
    # call per turn. Nothing waits for a window to fill: batches form under backlog.
    extract_window_ms: int = Field(0, ge=0)
    # The most turns one such call reads (at most 8, the prompt's own limit).
    extract_window_turns: int = Field(8, ge=1, le=8)
    # An extraction call lists the subject's newest this-many current facts, and answers
    # each free-text fact's slot question with them (models/incumbents.py): the separate
    # slot-match call is skipped where that answer still holds. A subject's extraction
    # calls then run one at a time, in its order. 0: nothing listed, nothing ordered.
    extract_incumbents: int = Field(40, ge=0, le=200)
    # minilm-onnx, minilm, st:<folder> or openai:<model>[:<dimension>]. Unset: a store
    # keeps the model its collection was built with, a new store starts on minilm-onnx
    # (streams/read/embedder_choice.py); moving a store is a migration (slotwise migrate
    # start --to minilm-onnx).
    embedder: str | None = None

    @model_validator(mode="after")
    def _provider_has_its_key(self) -> Self:
        if self.llm == "anthropic" and self.anthropic_api_key is None:
            raise ValueError("SLOTWISE_LLM=anthropic needs SLOTWISE_ANTHROPIC_API_KEY")
        return self

    @property
    def llm_provider(self) -> LlmProvider:
        """The provider that runs: the one named, else the one the key implies."""
        if self.llm is not None:
            return self.llm
        return "offline" if self.anthropic_api_key is None else "anthropic"

    @property
    def offline(self) -> bool:
        """The rules extractor and the NONE-answering slot matcher run, not the model."""
        return self.llm_provider == "offline"


class MatchingSettings(BaseSettings):
    """How a candidate finds its slot: the vector fetch's breadth and floor, the vocabulary."""

    model_config = _CONFIG

    top_k: int = Field(DEFAULT_TOP_K, ge=1, le=20)
    vector_floor: float = Field(DEFAULT_VECTOR_FLOOR, ge=-1.0, le=1.0)
    review_similarity: float = Field(0.85, ge=0.0, le=1.0)
    # The attribute vocabulary (a JSON file like processors/attributes.v1.json); None: the
    # packaged v1. A version that adds attributes is re-slotted with `slotwise reslot`.
    vocabulary: Path | None = None


class WorkerSettings(BaseSettings):
    """The worker: its group, its concurrency and commit cadence, its limits, its metrics."""

    model_config = _CONFIG

    group_id: str = "slotwise-worker"
    transactional_id: str | None = None
    # The classic protocol's only (see slotwise.streams.runtime.worker)
    static_membership: bool = True
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
    # The worker's young-generation GC threshold once setup is frozen
    # (streams/runtime/gc_policy.py); 0 keeps CPython's defaults.
    gc_young_threshold: int = Field(50_000, ge=0)


class ForgetSettings(BaseSettings):
    """The forgetting knobs, from ``SLOTWISE_FORGET_*`` variables (README, "Forgetting").

    ``half_lives`` sets categories the vocabulary has no attribute for (free
    text), as JSON: ``{"travel": 90, "hobby": 365}``; null never decays.
    """

    model_config = SettingsConfigDict(env_prefix="SLOTWISE_FORGET_", frozen=True, extra="ignore")

    threshold: float = Field(0.1, ge=0.0)
    budget: int | None = Field(None, ge=0)
    delta: float = Field(0.5, ge=0.0)
    verified_window_days: float = Field(30.0, ge=0.0)
    default_half_life_days: float = Field(365.0, gt=0.0)
    closed_to_cold: bool = True
    half_lives: dict[str, float | None] = Field(default_factory=dict)
    # the calibration app (streams/passes/calibration_app.py)
    calibrate_metrics_port: int = 9465
    calibrate_refresh_s: float = Field(300.0, gt=0.0)
    calibrate_confidence: float = Field(0.95, gt=0.0, lt=1.0)

    def policy(self) -> ForgetPolicy:
        return ForgetPolicy(
            threshold=self.threshold,
            budget=self.budget,
            delta=self.delta,
            verified_window=timedelta(days=self.verified_window_days),
            closed_to_cold=self.closed_to_cold,
        )

    def half_lives_of(self, schema: AttributeSchema) -> HalfLives:
        return HalfLives.of(schema, overrides=self.half_lives, default=self.default_half_life_days)


class ApiSettings(BaseSettings):
    """``slotwise serve``: who may call it."""

    model_config = _CONFIG

    # required whenever it listens off loopback (streams/api/serve.py)
    api_token: SecretStr | None = None


class Settings(
    KafkaSettings,
    RedisSettings,
    MilvusSettings,
    ModelSettings,
    MatchingSettings,
    WorkerSettings,
    ApiSettings,
):
    """Every group at once, as one deployment's processes read them.

    A component that needs one group takes that group's type; a ``Settings`` is
    each of them. The namespace and the data folder belong to the deployment.
    """

    model_config = _CONFIG

    # one deployment's names (see the module docstring)
    namespace: str | None = None
    data_dir: Path = Field(default_factory=default_data_dir)

    @model_validator(mode="before")
    @classmethod
    def _derive_from_namespace(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not data.get("namespace"):
            return data
        namespace = str(data["namespace"])
        if not _NAMESPACE.match(namespace):
            raise ValueError(
                f"namespace {namespace!r}: lower-case letters, digits, '-' and '_', "
                "starting with a letter, at most 40 characters"
            )
        return {**_derived_names(namespace), **data}

    def in_namespace(self, namespace: str) -> Settings:
        """These settings for another deployment on the same services: every name the
        namespace derives is derived again (``model_copy`` runs no validator)."""
        data = self.model_dump(exclude_unset=True)
        for name in _derived_names(namespace):
            data.pop(name, None)
        return type(self).model_validate({**data, "namespace": namespace})

    def to_env(self) -> dict[str, str]:
        """The ``SLOTWISE_*`` variables that reproduce these settings in a child process.

        Only what was set (by the environment, by arguments, or derived from the
        namespace) is rendered: the child computes the rest as this process did, and
        a variable added on top (``SLOTWISE_NAMESPACE``) still derives what it names.
        """
        return {
            f"SLOTWISE_{name.upper()}": _env_value(value)
            for name, value in self.model_dump(exclude_unset=True).items()
            if value is not None
        }


def _derived_names(namespace: str) -> dict[str, str]:
    """The topic, key, collection and group names a namespace gives a deployment."""
    flat = namespace.replace("-", "_")
    return {
        "topic_prefix": namespace,
        "redis_prefix": namespace,
        "milvus_collection_prefix": f"{flat}_facts",
        "milvus_alias": f"{flat}_facts_current",
        "group_id": f"{namespace}-worker",
    }


def _env_value(value: object) -> str:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
