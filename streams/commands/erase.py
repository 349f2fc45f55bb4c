"""The ``erase`` command: delete a scope everywhere, look again, and attest what was found.

An erase travels on the candidates topic keyed by its subject, so it runs in
offset order with the subject's writes: what came before it is erased, what
comes after is kept. Its steps, in this order:

1. **plan** (``processors.erase_scope``): the facts of the scope, those
   derived from them, and the kept facts whose links change; count the vector
   rows there are, and record that in Redis (``begin``: content-free) before
   anything irreversible;
2. **vectors**: drop the subject's buffered rows (``MilvusIndex.discard``, which
   also waits out a write of them under way), then delete their rows from
   every collection of the prefix, every model and both tiers (``MilvusErasure``);
3. **Redis** (``delete``, one atomic script): the facts (for a whole subject,
   every key but the content-free ones), the re-linked facts, and the stored
   outputs of earlier events rewritten without the scope (``redact``);
4. **look** for anything left, in every store, by fact id, by subject and by
   exact text (``streams/commands/erase_checks.py``): Milvus, the worker's buffer, the
   embedding cache, Redis. A look that finds something deletes again and looks
   again, up to ``attempts`` times; then the attestation says ``verified:
   false``, with what was found, and ``slotwise_erasures_total{verified="false"}``
   and an error log raise the alarm;
5. **attest** (``finish``): the outputs — a tombstone per erased fact on the
   compacted facts topic, the re-linked facts, the ``erasure/1`` attestation —
   are stored with the command, as any event's, and the progress record goes.

*Why a crash anywhere is safe.* Until step 3 Redis is as it was, and Milvus
deletes are idempotent: a replay plans the same erasure (the counts come from
the ``begin`` record) and deletes again. After step 3 the progress record holds
what the looks need, so a replay looks and attests. After step 5 a replay
finds the stored outputs and re-emits them byte for byte: one attestation,
whatever the crashes, since only the Kafka transaction that commits the
command's offset publishes it. Earlier events whose offsets were not committed
yet replay against their rewritten outputs: found applied, they emit and write
nothing of the scope (their entries are kept, content-free, for that reason).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from datetime import UTC, datetime

from prometheus_client import Counter, Histogram

from slotwise.models.embedders import CachedEmbedder
from slotwise.processors.erase_scope import ErasePlan, plan_erasure
from slotwise.processors.ports import Embedder
from slotwise.sinks.kafka.retention import Retention, RetentionReader
from slotwise.sinks.milvus.erasure import MilvusErasure
from slotwise.sinks.milvus.index import MilvusIndex
from slotwise.sinks.redis.erasure import RedisErasure, SubjectState, other_kinds
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.commands.erase_checks import ErasureChecks, TextCache
from slotwise.streams.commands.erase_records import (
    Progress,
    attestation,
    erase_outputs,
    redact,
    retained_copies,
)
from slotwise.streams.config import Settings
from slotwise.streams.runtime import clock
from slotwise.streams.runtime.errors import StateMoved
from slotwise.streams.runtime.metrics import STAGE_SECONDS
from slotwise.streams.write.fenced import MAX_STALE_RETRIES
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import Command, ErasureCheck

__all__ = ["ERASURES", "Erasure", "TextCache", "open_erasure"]

log = logging.getLogger(__name__)

ERASURES = Counter("slotwise_erasures_total", "Erase commands attested", ["verified"])
ERASURE_SECONDS = Histogram(
    "slotwise_erasure_seconds",
    "From an erase command's start to its attestation",
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600),
)
ERASURE_RESIDUE = Counter(
    "slotwise_erasure_residue_total", "Items an erasure's checks found left", ["store"]
)


class Erasure:
    """The handler of ``erase`` commands (``WritePath.commands["erase"]``)."""

    def __init__(
        self,
        store: RedisStore,
        vectors: MilvusErasure,
        index: MilvusIndex,
        *,
        catalogue: Catalogue,
        retention: Callable[[], Retention],
        cache: TextCache | None,
        reviews: RedisReviews | None = None,
        now: Callable[[], datetime],
        wall: Callable[[], datetime],
        attempts: int = 3,
        backoff_s: float = 0.5,
    ) -> None:
        self._store = store
        self._redis = RedisErasure(store)
        self._vectors = vectors
        self._index = index
        self._catalogue = catalogue
        self._retention = retention
        self._now = now  # the log's clock: the command's own time, as every apply
        self._wall = wall  # when things were checked and done, for the attestation
        self._checks = ErasureChecks(
            self._redis,
            vectors,
            index,
            cache=cache,
            reviews=reviews,
            wall=wall,
            attempts=attempts,
            backoff_s=backoff_s,
        )

    async def __call__(self, command: Command) -> tuple[Outbound, ...]:
        for _ in range(MAX_STALE_RETRIES):
            done = await self._run(command)
            if done is not None:
                return done
        raise StateMoved(
            f"subject {command.subject_id!r} kept changing while erasing {command.command_id}"
        )

    async def _run(self, command: Command) -> tuple[Outbound, ...] | None:
        """One pass; None when the subject moved under it (look again)."""
        subject, command_id = command.subject_id, command.command_id
        seen = await self._store.snapshot(subject, command_id)
        if seen.stored is not None:
            return StoredOutputs.decode(seen.stored).messages
        blob = await self._redis.progress(subject, command_id)
        progress = await asyncio.to_thread(Progress.decode, blob) if blob is not None else None
        version = seen.version
        if progress is None or progress.phase == "planned":
            with _stage("erase_plan"):
                state = await self._redis.state(subject)
                # The pure work runs in a thread, in slices: the event loop keeps serving
                # other subjects while a big subject is planned, redacted and searched.
                plan = await asyncio.to_thread(plan_erasure, command, state.facts)
                ids = _vector_ids(command, plan)
                if progress is None or progress.version != version:
                    replan = progress is not None
                    progress, done = await self._begin(command, version, ids, replan=replan)
                    if progress is None:
                        return done
            deleted = await self._delete(command, progress, plan, state, ids)
            if deleted is None:
                return None
            progress, version = deleted
        return await self._attest(command, progress, version)

    async def _begin(
        self, command: Command, version: int, ids: tuple[str, ...] | None, *, replan: bool
    ) -> tuple[Progress | None, tuple[Outbound, ...] | None]:
        found = await self._vectors.count(command.subject_id, ids) if ids != () else {}
        planned = Progress("planned", version, self._wall().isoformat(), found)
        step = await self._redis.begin(
            command.subject_id,
            command.command_id,
            expected_version=version,
            progress=planned.encode(),
            force=replan,
        )
        if step.finished and step.blob is not None:
            return None, StoredOutputs.decode(step.blob).messages
        if step.status not in ("planned", "resumed") or step.blob is None:
            return None, None
        progress = Progress.decode(step.blob)
        if progress.phase != "planned" or progress.version != version:
            return None, None  # another run of this erase got further: look again
        return progress, None

    async def _delete(
        self,
        command: Command,
        progress: Progress,
        plan: ErasePlan,
        state: SubjectState,
        ids: tuple[str, ...] | None,
    ) -> tuple[Progress, int] | None:
        subject = command.subject_id
        with _stage("erase_vectors"):
            # The buffer first: after it, no row of the scope can reach Milvus any more.
            discarded = await self._index.discard(subject, _set(ids))
            if ids != ():
                await self._vectors.delete(subject, ids)
        started = time.perf_counter()
        rewrites = await asyncio.to_thread(_rewrites, state, plan, command.command_id)
        others = sorted(other_kinds(state.keys)) if plan.whole_subject else []
        deleted = {
            "redis:facts": len(plan.erased),
            "redis:derived_facts": len(plan.derived),
            "redis:slot_index": sum(1 for f in plan.erased if f.status == "current"),
            "redis:relinked_facts": len(plan.relinked),
            "redis:outputs": len(rewrites),
            "redis:keys": len(others),
            "milvus:buffer": discarded,
            **{f"milvus:{name}": rows for name, rows in progress.found.items()},
        }
        done = Progress(
            "deleted",
            progress.version + 1,
            progress.started_at,
            progress.found,
            deleted,
            ids=tuple(ids) if ids is not None else plan.erased_ids,
            facts=plan.erased_ids,
            relinked=tuple(f.fact_id for f in plan.relinked),
            kept=tuple(sorted(plan.kept_ids)),
            texts=plan.texts,
        )
        step = await self._redis.delete(
            subject,
            command.command_id,
            expected_version=progress.version,
            progress=await asyncio.to_thread(done.encode),
            now=self._now(),
            whole_subject=plan.whole_subject,
            erased_ids=plan.erased_ids,
            relinked=plan.relinked,
            rewrites=rewrites,
            other_kinds=others,
        )
        STAGE_SECONDS.labels("erase_redis").observe(time.perf_counter() - started)
        return (done, step.version) if step.status == "deleted" else None

    async def _attest(
        self, command: Command, progress: Progress, version: int
    ) -> tuple[Outbound, ...] | None:
        subject = command.subject_id
        with _stage("erase_checks"):
            checks, attempts, extra = await self._checks.run(command, progress)
        deleted = dict(progress.deleted)
        for store, count in extra.items():
            deleted[store] = deleted.get(store, 0) + count
        deleted["kafka:facts:tombstones"] = len(progress.facts)
        retention = await asyncio.to_thread(self._retention)
        completed = self._wall()
        attested = attestation(
            command,
            deleted=deleted,
            checks=checks,
            retained=retained_copies(self._catalogue, retention, completed),
            attempts=attempts,
            completed_at=completed,
        )
        relinked = await self._store.get_facts(subject, progress.relinked)
        outputs = erase_outputs(attested, progress.facts, relinked)
        step = await self._redis.finish(
            subject,
            command.command_id,
            expected_version=version,
            outputs=outputs.encode(),
            now=self._now(),
        )
        if step.finished and step.blob is not None:
            return StoredOutputs.decode(step.blob).messages
        if step.status != "applied":
            return None
        self._report(attested.verified, checks, progress, completed)
        return outputs.messages

    def _report(
        self, verified: bool, checks: Sequence[ErasureCheck], progress: Progress, done: datetime
    ) -> None:
        ERASURES.labels(str(verified).lower()).inc()
        started = datetime.fromisoformat(progress.started_at)
        ERASURE_SECONDS.observe(max(0.0, (done - started).total_seconds()))
        if verified:
            return
        for check in checks:
            if check.found:
                ERASURE_RESIDUE.labels(check.store.split(":", 1)[0]).inc(check.found)
        log.error(
            "erasure NOT verified: %s",
            "; ".join(f"{c.store} {c.method}: {c.found} left" for c in checks if c.found),
        )


def _rewrites(state: SubjectState, plan: ErasePlan, command_id: str) -> dict[str, bytes]:
    """The earlier events' stored outputs without the scope, by event id (changed ones)."""
    rewrites = {}
    for event_id, blob in state.outputs.items():
        redacted = redact(StoredOutputs.decode(blob), plan, command_id)
        if redacted is not None:
            rewrites[event_id] = redacted.encode()
    return rewrites


@contextmanager
def _stage(name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        STAGE_SECONDS.labels(name).observe(time.perf_counter() - started)


def _set(ids: Sequence[str] | None) -> set[str] | None:
    return None if ids is None else set(ids)


def _vector_ids(command: Command, plan: ErasePlan) -> tuple[str, ...] | None:
    """The fact ids whose vector rows go (None: every row of the subject). A fact scope
    covers the named id even when Redis no longer holds that fact."""
    if plan.whole_subject:
        return None
    named = {command.fact_id} if command.fact_id is not None else set()
    return tuple(sorted(set(plan.erased_ids) | named))


def open_erasure(
    settings: Settings,
    store: RedisStore,
    index: MilvusIndex,
    embedder: Embedder,
    stack: AsyncExitStack,
) -> Erasure:
    """The worker's erase handler, on the deployment's stores (closed with ``stack``)."""
    vectors = MilvusErasure(
        settings.milvus_uri,
        # The index's space: with an adapter, the erased texts are searched in the
        # old collection as the index searches it.
        index.space_embedder,
        token=settings.milvus_token.get_secret_value() if settings.milvus_token else None,
        prefix=settings.milvus_collection_prefix,
    )
    stack.push_async_callback(vectors.close)
    catalogue = settings.catalogue()
    return Erasure(
        store,
        vectors,
        index,
        catalogue=catalogue,
        retention=RetentionReader(settings.librdkafka(), [s.name for s in catalogue.specs()]).read,
        cache=embedder if isinstance(embedder, CachedEmbedder) else None,
        reviews=RedisReviews(store, prefix=settings.redis_prefix),
        now=clock.now,
        wall=lambda: datetime.now(tz=UTC),
    )
