"""Wiring: settings → stores, models, cascade, write path, worker."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import timedelta

from slotwise.models.embedders import MINILM_MODELS
from slotwise.models.extractor import AnthropicExtractor
from slotwise.models.incumbents import CurrentFacts, Incumbency
from slotwise.models.llm import ModelClient
from slotwise.models.slot_matcher import AnthropicSlotMatcher
from slotwise.processors.cold_restate import ColdAwareCascade
from slotwise.processors.extract import RulesExtractor
from slotwise.processors.gate import GatedExtractor, TurnGate
from slotwise.processors.guards import GuardedCascade
from slotwise.processors.ports import Embedder, Extractor, SlotMatcher
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import OfflineSlotMatcher
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.redis.commits import CommitMarks
from slotwise.sinks.redis.replicas import ReplicaAck
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.commands.erase import open_erasure
from slotwise.streams.commands.forget import open_forgetting
from slotwise.streams.commands.registry import CommandDeps, command_handlers
from slotwise.streams.config import ModelSettings, Settings
from slotwise.streams.read.embedder_choice import configured_embedder
from slotwise.streams.read.store import open_store
from slotwise.streams.read.vector_space import open_fact_index
from slotwise.streams.runtime import clock
from slotwise.streams.runtime.checkpoint import Sink
from slotwise.streams.runtime.failures import classify
from slotwise.streams.runtime.gc_policy import settle_heap
from slotwise.streams.runtime.health import Health, HealthServer
from slotwise.streams.runtime.index_heal import IndexHeal
from slotwise.streams.runtime.metrics import EXTRACT_GATE, EXTRACTED_SLOT_ANSWERS
from slotwise.streams.runtime.ports import WorkerClients
from slotwise.streams.runtime.worker import Worker, WorkerConfig
from slotwise.streams.wiring.background import open_background
from slotwise.streams.wiring.kafka_clients import kafka_clients
from slotwise.streams.wiring.timed import TimedMatcher, TimedSearch
from slotwise.streams.write.extract_window import ExtractWindow, WindowedExtractor
from slotwise.streams.write.path import WritePath
from slotwise.topics.catalogue import Catalogue

__all__ = [
    "Services",
    "commit_sinks",
    "model_client",
    "open_services",
    "replica_name",
    "run_worker",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Services:
    catalogue: Catalogue
    store: RedisStore
    index: MilvusIndex
    write_path: WritePath
    heal: IndexHeal


def replica_name(settings: Settings, instance: str | None = None) -> str:
    """Stable across restarts of one replica (a StatefulSet pod name, the host name).

    It names the replica's Kafka transactional id, so a restart fences its own
    unfinished transaction at once instead of leaving read_committed readers
    waiting for its timeout, and, in classic groups, its static membership, so a
    restart takes its partitions back without a rebalance.
    """
    return f"{settings.group_id}-{instance or socket.gethostname()}"


def model_client(settings: ModelSettings) -> ModelClient:
    """The process's model client; raises ``ModelNotConfigured`` when offline."""
    return ModelClient.connect(
        settings.anthropic_api_key,
        model=settings.llm_model,
        base_url=settings.anthropic_base_url,
        timeout_s=settings.llm_timeout_s,
        max_concurrency=settings.llm_max_concurrency,
        max_retries=settings.llm_max_retries,
    )


def _models(
    settings: Settings,
    schema: AttributeSchema,
    stack: AsyncExitStack,
    embedder: Embedder | None,
    store: CurrentFacts,
) -> tuple[Extractor, SlotMatcher]:
    if settings.offline:
        return RulesExtractor(schema, embedder), OfflineSlotMatcher(settings.review_similarity)
    client = model_client(settings)
    stack.push_async_callback(client.aclose)  # its HTTP pool, closed before the loop ends
    # The subject's facts are read where its turns are extracted, in their order.
    incumbency = Incumbency(store, settings.extract_incumbents)
    model = AnthropicExtractor(client, schema, incumbency=incumbency)
    extractor: Extractor = model
    if settings.extract_window_ms:
        window = ExtractWindow(
            timedelta(milliseconds=settings.extract_window_ms), settings.extract_window_turns
        )
        extractor = WindowedExtractor(model, window)
    if settings.extract_gate:
        extractor = GatedExtractor(
            extractor, TurnGate(schema), lambda decision: EXTRACT_GATE.labels(decision).inc()
        )
    return extractor, AnthropicSlotMatcher(client, schema)


async def open_services(settings: Settings, stack: AsyncExitStack) -> Services:
    schema = AttributeSchema.load(settings.vocabulary)
    store = open_store(settings)
    stack.push_async_callback(store.close)
    background = open_background(settings, store)
    embedder = await asyncio.to_thread(configured_embedder, settings)  # a model loads: seconds
    log.info(
        "embedding with %s (SLOTWISE_EMBEDDER %s)",
        embedder.model_name,
        settings.embedder or "unset: the store's model, or a new store's default",
    )
    index = await open_fact_index(settings, store, embedder)
    stack.push_async_callback(index.close)
    await index.setup()
    # The classifier's threshold is calibrated on MiniLM (either precision): another model
    # runs the rules alone.
    minilm = embedder if embedder.model_name in MINILM_MODELS else None
    extractor, matcher = _models(settings, schema, stack, minilm, store)
    forgetting = open_forgetting(
        settings, store, index, embedder, schema, stack=stack, now=clock.now
    )
    # Cold-tier aware: a candidate restating an archived fact restores it.
    cascade = ColdAwareCascade(
        schema,
        store,
        TimedSearch(index),
        TimedMatcher(matcher),
        top_k=settings.top_k,
        floor=settings.vector_floor,
        now=clock.now,
        embedding_model=embedder.model_name,
        matcher_label="offline" if settings.offline else "llm",
        extracted=lambda outcome: EXTRACTED_SLOT_ANSWERS.labels(outcome).inc(),
        cold=forgetting.cold,
    )
    # Review rejections remembered, derived facts marked (processors/guards.py).
    guarded = GuardedCascade(
        cascade, store, rejections=background.reviews, dependents=background.provenance
    )
    erase = open_erasure(settings, store, index, embedder, stack)
    write_path = WritePath(
        extractor,
        guarded,
        store,
        index,
        clock.now,
        command_handlers(
            CommandDeps(
                store,
                index,
                guarded,
                schema,
                embedder.model_name,
                background.reviews,
                background.provenance,
            ),
            erase=erase,
            forgetting=forgetting.forgetting,
        ),
        observers=(background.follow.after_candidate,),
    )
    heal = IndexHeal(store, index, forgetting.tiers)
    return Services(settings.catalogue(), store, index, write_path, heal)


def commit_sinks(settings: Settings, services: Services) -> dict[str, Sink]:
    """What must be durable before a commit, in order: the vectors (an offset is never
    committed before its rows are searchable), then, last so that it covers every write
    before it, the replicas' copy of the Redis writes."""
    sinks: dict[str, Sink] = {"milvus": services.index}
    if settings.redis_min_replicas:
        sinks["redis"] = ReplicaAck(
            services.store.client,
            prefix=settings.redis_prefix,
            min_replicas=settings.redis_min_replicas,
            timeout_ms=settings.redis_wait_timeout_ms,
        )
    return sinks


async def run_worker(
    settings: Settings,
    stop: asyncio.Event,
    *,
    instance: str | None = None,
    clients: Callable[[Settings], WorkerClients] = kafka_clients,
) -> None:
    health = Health()
    server = HealthServer(health, settings.metrics_port, settings.metrics_host)
    server.start()
    log.info("metrics and health on http://127.0.0.1:%d", server.port)
    try:
        async with AsyncExitStack() as stack:
            services = await open_services(settings, stack)
            replica = replica_name(settings, instance)
            config = WorkerConfig(
                max_in_flight=settings.max_in_flight,
                commit_interval_s=settings.commit_interval_ms / 1000,
                max_message_bytes=settings.max_message_bytes,
                max_text_bytes=settings.max_text_bytes,
                shutdown_timeout_s=settings.shutdown_timeout_s,
                # Long enough for a rejoin after any session expiry to have happened.
                rejoin_timeout_s=max(60.0, 3 * settings.session_timeout_ms / 1000),
            )
            kafka = clients(settings)
            member = replica if settings.static_membership else None
            worker = Worker(
                config,
                services.catalogue,
                services.write_path,
                consumer=kafka.consumer(member),
                replace_consumer=lambda: kafka.consumer(member),
                publisher=kafka.publisher(settings.transactional_id or replica),
                sinks=commit_sinks(settings, services),
                classify=classify,
                health=health,
                marks=CommitMarks(
                    services.store.client, prefix=settings.redis_prefix, group=settings.group_id
                ),
                server=services.store.identity,
                heal=services.heal,
            )
            settle_heap(settings.gc_young_threshold)
            await worker.run(stop)
    finally:
        server.stop()
