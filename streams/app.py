"""Wiring: settings → stores, models, cascade, write path, worker."""

from __future__ import annotations

import asyncio
import logging
import socket
from contextlib import AsyncExitStack
from dataclasses import dataclass

from processors.cascade import Cascade
from processors.extract import RulesExtractor
from processors.ports import Extractor, SlotMatcher
from processors.schema import AttributeSchema
from processors.slot_match import OfflineSlotMatcher
from sinks.milvus_index import MilvusIndex
from sinks.redis_store import RedisStore
from streams import clock
from streams.embedder import make_embedder
from streams.health import Health, HealthServer
from streams.llm import ModelClient
from streams.llm_extract import AnthropicExtractor
from streams.llm_match import AnthropicSlotMatcher
from streams.settings import Settings
from streams.timed import TimedMatcher, TimedSearch
from streams.worker import Worker, WorkerConfig
from streams.write_path import WritePath
from topics.catalogue import Catalogue

__all__ = ["Services", "open_services", "replica_name", "run_worker"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Services:
    catalogue: Catalogue
    store: RedisStore
    index: MilvusIndex
    write_path: WritePath


def replica_name(settings: Settings, instance: str | None = None) -> str:
    """Stable across restarts of one replica (a StatefulSet pod name, the host name).

    It names the replica's Kafka transactional id, so a restart fences its own
    unfinished transaction at once instead of leaving read_committed readers
    waiting for its timeout, and, in classic groups, its static membership, so a
    restart takes its partitions back without a rebalance.
    """
    return f"{settings.group_id}-{instance or socket.gethostname()}"


def _models(settings: Settings, schema: AttributeSchema) -> tuple[Extractor, SlotMatcher]:
    if settings.offline:
        return RulesExtractor(schema), OfflineSlotMatcher(settings.review_similarity)
    client = ModelClient.from_settings(settings)
    return AnthropicExtractor(client, schema), AnthropicSlotMatcher(client)


async def open_services(settings: Settings, stack: AsyncExitStack) -> Services:
    schema = AttributeSchema.load()
    store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
    stack.push_async_callback(store.close)
    embedder = make_embedder(settings)
    index = MilvusIndex(
        settings.milvus_uri,
        embedder,
        token=settings.milvus_token.get_secret_value() if settings.milvus_token else None,
        alias=settings.milvus_alias,
        prefix=settings.milvus_collection_prefix,
        flush_every=settings.milvus_flush_every,
    )
    stack.push_async_callback(index.close)
    await index.setup()
    extractor, matcher = _models(settings, schema)
    cascade = Cascade(
        schema,
        store,
        TimedSearch(index),
        TimedMatcher(matcher),
        top_k=settings.top_k,
        floor=settings.vector_floor,
        now=clock.now,
        embedding_model=embedder.model_name,
    )
    write_path = WritePath(extractor, cascade, store, index, clock.now)
    return Services(settings.catalogue(), store, index, write_path)


async def run_worker(
    settings: Settings, stop: asyncio.Event, *, instance: str | None = None
) -> None:
    health = Health()
    server = HealthServer(health, settings.metrics_port, settings.metrics_host)
    server.start()
    log.info("metrics and health on http://127.0.0.1:%d", server.port)
    try:
        async with AsyncExitStack() as stack:
            services = await open_services(settings, stack)
            config = WorkerConfig(
                bootstrap=settings.kafka_bootstrap,
                group_id=settings.group_id,
                transactional_id=settings.transactional_id or replica_name(settings, instance),
                group_instance_id=(
                    replica_name(settings, instance) if settings.static_membership else None
                ),
                group_protocol=settings.group_protocol,
                session_timeout_ms=settings.session_timeout_ms,
                max_in_flight=settings.max_in_flight,
                commit_interval_s=settings.commit_interval_ms / 1000,
                max_message_bytes=settings.max_message_bytes,
                max_text_bytes=settings.max_text_bytes,
                shutdown_timeout_s=settings.shutdown_timeout_s,
            )
            worker = Worker(config, services.catalogue, services.write_path, health=health)
            await worker.run(stop)
    finally:
        server.stop()
