"""``slotwise rebuild``: Redis state and Milvus rows put back from the compacted facts topic.

The facts topic holds the latest record of every fact, keyed by fact id (a
tombstone once erased), so it is enough to rebuild what the read paths and
the write path's lookups need: each fact with its status and
bi-temporal fields, the slot index, the archived hint, versions, the
observations its facts came from and the watermark (``sinks/redis_rebuild``),
and each fact's vector row in the tier its status names: current facts in the
hot tier behind the alias, every other in the cold one (``sinks/milvus_tiers``).

It reads the topic ``read_committed`` from where it last stopped to its end,
in batches; each batch is written to Redis, then to Milvus, then recorded as
done, so a rebuild killed at any point and started again resumes and ends
with the same state. A rebuild of ``--all`` goes into an empty store (a new
Redis, or a new prefix); one of ``--subject S`` replaces that subject's state.
Workers must be stopped while it runs: it sets each subject's version past any
an earlier decision could hold, but a worker applying meanwhile would mix the
two.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime

from confluent_kafka import Consumer, KafkaError, Message, TopicPartition

from slotwise.processors.resolve import vector_row
from slotwise.sinks.milvus.erasure import MilvusErasure
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.milvus.tiers import MilvusTiers
from slotwise.sinks.redis.rebuild import RedisRebuild
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import Settings
from slotwise.streams.read.embedder_choice import configured_embedder
from slotwise.streams.read.store import open_store
from slotwise.topics.codec import decode_record
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Fact

__all__ = [
    "FactsBatch",
    "FactsLog",
    "Rebuild",
    "RebuildError",
    "RebuildRefused",
    "RebuildReport",
    "RebuildStores",
    "open_rebuild_stores",
    "scope_name",
]


class RebuildError(SlotwiseError, RuntimeError):
    """The facts topic could not be read to its end."""


class RebuildRefused(RebuildError):
    """A rebuild of every subject was asked into a store that already holds facts."""


def scope_name(subject_id: str | None) -> str:
    return "all" if subject_id is None else f"subject:{subject_id}"


@dataclass(frozen=True, slots=True)
class FactsBatch:
    """Records of the facts topic in offset order (None: a tombstone), and where they end."""

    records: tuple[tuple[str, Fact | None], ...]
    next_offsets: Mapping[int, int]


class FactsLog:
    """The facts topic read ``read_committed`` from given offsets to its end, in batches."""

    def __init__(self, settings: Settings, *, batch_size: int = 1000) -> None:
        self.topic = settings.catalogue().facts
        self._partitions = settings.partitions
        self._batch_size = batch_size
        self._consumer = Consumer(
            settings.librdkafka(
                {
                    "group.id": "slotwise-rebuild",  # never commits: assigned, not subscribed
                    "enable.auto.commit": False,
                    "isolation.level": "read_committed",
                    "enable.partition.eof": True,
                    "auto.offset.reset": "earliest",
                }
            )
        )

    def close(self) -> None:
        self._consumer.close()

    def batches(self, start: Mapping[int, int]) -> Iterator[FactsBatch]:
        """From ``start`` (the beginning where absent) until every partition has reached
        the end it had when it was reached."""
        self._consumer.assign(
            [
                TopicPartition(self.topic, p, start.get(p, -2))  # -2: the beginning
                for p in range(self._partitions)
            ]
        )
        ended: set[int] = set()
        while len(ended) < self._partitions:
            records: list[tuple[str, Fact | None]] = []
            offsets: dict[int, int] = {}
            while len(records) < self._batch_size and len(ended) < self._partitions:
                wanted = min(500, self._batch_size - len(records))
                for message in self._consumer.consume(wanted, 1.0):
                    self._take(message, records, offsets, ended)
            if records or offsets:
                yield FactsBatch(tuple(records), offsets)

    @staticmethod
    def _take(
        message: Message,
        records: list[tuple[str, Fact | None]],
        offsets: dict[int, int],
        ended: set[int],
    ) -> None:
        error = message.error()
        if error is not None and error.code() != KafkaError._PARTITION_EOF:
            raise RebuildError(f"reading the facts topic failed: {error}")
        partition, offset = message.partition(), message.offset()
        if partition is None or offset is None:
            raise RebuildError("the facts topic returned a record without partition or offset")
        if error is not None:  # the end: the offset is the partition's next
            ended.add(partition)
            offsets[partition] = max(offsets.get(partition, 0), offset)
            return
        key = message.key()
        value = message.value()
        if key is None:
            return
        fact = None
        if value is not None:
            record = decode_record(value, expect=(Fact,))
            if not isinstance(record, Fact):
                raise RebuildError(f"the facts topic holds a {type(record).__name__}")
            fact = record
        records.append((key.decode(), fact))
        offsets[partition] = offset + 1


@dataclass(frozen=True, slots=True)
class RebuildStores:
    store: RedisStore
    redis: RedisRebuild
    index: MilvusIndex
    tiers: MilvusTiers
    erasure: MilvusErasure


async def open_rebuild_stores(settings: Settings, stack: AsyncExitStack) -> RebuildStores:
    """The deployment's stores as a rebuild (and its verification) writes and reads them."""
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else None
    store = open_store(settings)
    stack.push_async_callback(store.close)
    embedder = await asyncio.to_thread(configured_embedder, settings)
    index = MilvusIndex(
        settings.milvus_uri,
        embedder,
        token=token,
        alias=settings.milvus_alias,
        prefix=settings.milvus_collection_prefix,
        # A rebuild writes in batches and flushes once per batch.
        flush_every=1_000_000,
    )
    stack.push_async_callback(index.close)
    await index.setup()
    tiers = MilvusTiers(index, embedder, uri=settings.milvus_uri, token=token)
    stack.push_async_callback(tiers.close)
    erasure = MilvusErasure(
        settings.milvus_uri, embedder, token=token, prefix=settings.milvus_collection_prefix
    )
    stack.push_async_callback(erasure.close)
    return RebuildStores(
        store, RedisRebuild(store, prefix=settings.redis_prefix), index, tiers, erasure
    )


@dataclass
class RebuildReport:
    scope: str
    resumed: bool = False
    records: int = 0
    facts: int = 0
    tombstones: int = 0
    subjects: set[str] = field(default_factory=set)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "scope": self.scope,
            "resumed": self.resumed,
            "records_read": self.records,
            "facts_written": self.facts,
            "tombstones": self.tombstones,
            "subjects": len(self.subjects),
            "seconds": round(self.seconds, 2),
            "facts_per_s": round(self.facts / self.seconds, 1) if self.seconds else 0.0,
        }


class Rebuild:
    def __init__(self, stores: RebuildStores, log: FactsLog, *, subject_id: str | None) -> None:
        self._stores = stores
        self._log = log
        self._subject = subject_id
        self._scope = scope_name(subject_id)
        # Past every version an apply could have counted to: a decision computed
        # against the lost store can never pass the fence of the rebuilt one.
        self._version_floor = int(time.time() * 1000)

    async def run(self) -> RebuildReport:
        report = RebuildReport(self._scope)
        started = time.perf_counter()
        redis = self._stores.redis
        start = await redis.offsets(self._scope, self._log.topic)
        report.resumed = start is not None
        if start is None:
            await self._prepare()
            await redis.begin(self._scope)
        batches = self._log.batches(start or {})
        while (batch := await asyncio.to_thread(next, batches, None)) is not None:
            await self._apply(batch, report)
        await redis.finish(self._scope)
        report.seconds = time.perf_counter() - started
        return report

    async def _prepare(self) -> None:
        if self._subject is None:
            if await self._stores.redis.holds_facts():
                raise RebuildRefused(
                    "the store already holds facts under this prefix: rebuild --all into an "
                    "empty Redis or a new SLOTWISE_REDIS_PREFIX, or rebuild --subject S"
                )
            return
        await self._stores.redis.clear_subject(self._subject)
        await self._stores.index.delete_subject(self._subject)

    async def _apply(self, batch: FactsBatch, report: RebuildReport) -> None:
        latest: dict[str, Fact | None] = {}
        for fact_id, fact in batch.records:
            latest.pop(fact_id, None)  # keep offset order: the last record decides
            latest[fact_id] = fact
        # Every record's subject, a tombstone's from the fact's earlier records (this batch's
        # or, through the progress, an earlier batch's).
        seen = {f: fact.subject_id for f, fact in batch.records if fact is not None}
        erased = [f for f, fact in latest.items() if fact is None and f not in seen]
        earlier = await self._stores.redis.subjects_of(self._scope, erased)
        by_subject: dict[str, dict[str, Fact | None]] = {}
        for fact_id, fact in latest.items():
            subject = seen.get(fact_id) or earlier.get(fact_id)
            if subject is None or (self._subject is not None and subject != self._subject):
                continue  # a tombstone of a fact this rebuild never saw, or another subject's
            by_subject.setdefault(subject, {})[fact_id] = fact
        now = datetime.now(UTC)
        for subject, facts in by_subject.items():
            await self._stores.redis.put(subject, facts, version_floor=self._version_floor, now=now)
        await self._vectors(by_subject)
        mine = {f: s for f, s in seen.items() if self._subject is None or s == self._subject}
        await self._stores.redis.advance(self._scope, self._log.topic, batch.next_offsets, mine)
        report.records += len(batch.records)
        for subject, facts in by_subject.items():
            report.subjects.add(subject)
            report.facts += sum(1 for f in facts.values() if f is not None)
            report.tombstones += sum(1 for f in facts.values() if f is None)

    async def _vectors(self, by_subject: Mapping[str, Mapping[str, Fact | None]]) -> None:
        """Current facts' rows into the hot tier, every other fact's into the cold one,
        an erased fact's rows out of both."""
        index = self._stores.index
        for facts in by_subject.values():
            index.add(
                vector_row(f) for f in facts.values() if f is not None and f.status == "current"
            )
        await index.flush()
        kept = [f for facts in by_subject.values() for f in facts.values() if f is not None]
        await self._stores.tiers.settle_many(kept)
        for subject, facts in by_subject.items():
            erased = [fact_id for fact_id, f in facts.items() if f is None]
            if erased:
                await self._stores.erasure.delete(subject, erased)
