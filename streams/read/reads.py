"""The read side, once: a subject's facts, search within the subject, its logged events.

``slotwise facts``, the HTTP API (``slotwise serve``) and :mod:`slotwise.client`
all read through :class:`Reads`, and every read of facts goes through one
method, :meth:`Reads.facts` — search included — so what a read means (the
temporal semantics of :mod:`slotwise.streams.read.temporal`) and what a read does
(``on_read``: the forgetting pass's "a read counts as an access") live in one
place.

Every read concerns one subject, validated as the records validate a
``subject_id``. Facts come from that subject's Redis keys only; a search asks
Milvus with the subject's filter, drops any foreign hit, and joins the hits to
the subject's own facts, so another subject's fact cannot come back even if
the index misbehaved.

Errors::

    ReadError               every refused or failed read
    ├── InvalidQuery        the request is wrong (a subject id, a naive time, a bound); ``field``
    └── ReadUnavailable     Redis, Milvus, the embedder or Kafka failed; ``service``
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import TypeAdapter, ValidationError

from slotwise.processors.model import Tier
from slotwise.sinks.exceptions import SinkError
from slotwise.sinks.redis.access import AccessHook, RedisAccess
from slotwise.sinks.redis.provenance import Head, chain_head
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import Settings
from slotwise.streams.read.store import open_store
from slotwise.streams.read.subject_log import LogPage, LogUnavailable, SubjectLog
from slotwise.streams.read.temporal import FactQuery, select
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import (
    ErasureAttestation,
    Fact,
    Identifier,
    ReviewItem,
    SupersessionEvent,
)

if TYPE_CHECKING:
    from slotwise.processors.ports import Embedder
    from slotwise.sinks.milvus.index import MilvusIndex

__all__ = [
    "MAX_K",
    "MAX_LIMIT",
    "MAX_QUERY_CHARS",
    "AccessRecorder",
    "FactQuery",
    "InvalidQuery",
    "ReadError",
    "ReadUnavailable",
    "Reads",
    "SearchHit",
    "check_subject",
]

MAX_K = 50
MAX_LIMIT = 500
MAX_QUERY_CHARS = 2000
# Hits fetched per hit wanted: a search ranks every row of the subject's index,
# superseded facts too; the query then keeps the ones it asks for.
_OVERFETCH = 4
_SUBJECT = TypeAdapter(Identifier)

# Called with the subject, the facts a read returned (never on a failed read) and who
# read them ("cli", "api", "client", "inspector"; "+search" when a search found them):
# the forgetting pass records accesses here, and may count some readers and not others.
AccessRecorder = Callable[[str, Sequence[Fact], str], Awaitable[None]]


class ReadError(SlotwiseError):
    pass


class InvalidQuery(ReadError, ValueError):
    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class ReadUnavailable(ReadError, ConnectionError):
    def __init__(self, message: str, *, service: str) -> None:
        super().__init__(message)
        self.service = service


class Nearest(Protocol):
    async def nearest(
        self, subject_id: str, text: str, *, k: int, floor: float, tier: Tier = "hot"
    ) -> list[tuple[str, float]]: ...


@dataclass(frozen=True, slots=True)
class SearchHit:
    fact: Fact
    score: float


def check_subject(subject_id: str) -> str:
    """The subject id, if a record would accept it; :class:`InvalidQuery` otherwise."""
    try:
        return _SUBJECT.validate_python(subject_id)
    except ValidationError as exc:
        raise InvalidQuery(
            f"subject_id: {exc.errors(include_url=False)[0]['msg']}", field="subject_id"
        ) from None


def _check_instant(name: str, value: datetime | None) -> None:
    if value is not None and value.utcoffset() is None:
        raise InvalidQuery(f"{name}: a timestamp must carry a timezone", field=name)


class Reads:
    """Reads of one deployment (its Redis prefix, Milvus alias, topics)."""

    def __init__(
        self,
        store: RedisStore,
        *,
        vectors: Callable[[], Awaitable[Nearest]] | None = None,
        log: SubjectLog | None = None,
        topics: Any = None,
        on_read: AccessRecorder | None = None,
    ) -> None:
        self._store = store
        self._vectors_factory = vectors
        self._vectors: Nearest | None = None
        self._vectors_lock = asyncio.Lock()
        self._log = log
        self._topics = topics
        self._on_read = on_read

    @classmethod
    def open(
        cls, settings: Settings, stack: AsyncExitStack, *, on_read: AccessRecorder | None = None
    ) -> Reads:
        """The reads of ``settings``' deployment; the stack closes what they open.

        Milvus and the embedder are built on the first search only: a caller that
        never searches never imports them.
        """
        store = open_store(settings)
        stack.push_async_callback(store.close)
        if on_read is None:
            # Every read counts as an access of what it returned (forgetting):
            # recorded after the read answered, and waited for before the store closes.
            hook = AccessHook(RedisAccess(store))
            stack.push_async_callback(hook.drain)
            on_read = hook
        log = SubjectLog(settings.librdkafka())
        stack.callback(log.close)
        holder: list[MilvusIndex] = []

        async def close_index() -> None:
            for index in holder:
                await index.close()

        stack.push_async_callback(close_index)

        async def vectors() -> Nearest:
            # Imported only now (numpy, pymilvus, the model), off the event loop.
            from slotwise.streams.read.vector_space import open_fact_index  # noqa: PLC0415

            embedder = await asyncio.to_thread(_embedder, settings)
            index = await open_fact_index(settings, store, embedder)
            holder.append(index)
            return index

        return cls(store, vectors=vectors, log=log, topics=settings.catalogue(), on_read=on_read)

    # -- facts ----------------------------------------------------------------

    async def facts(
        self,
        subject_id: str,
        query: FactQuery = FactQuery(),  # noqa: B008 - frozen, shared safely
        *,
        only: Sequence[str] | None = None,
        via: str = "api",
    ) -> list[Fact]:
        """The facts ``query`` asks for (``only``: among these fact ids). The one read of facts.

        ``via`` names the reader for the access hook.
        """
        subject_id = check_subject(subject_id)
        _check_instant("as_of", query.as_of)
        _check_instant("believed_at", query.believed_at)
        try:
            if only is not None and query.as_of is None and query.believed_at is None:
                stored = await self._store.get_facts(subject_id, list(dict.fromkeys(only)))
            else:
                stored = await self._store.facts(subject_id, include_history=not query.present)
        except SinkError as exc:
            raise ReadUnavailable(f"redis: {exc}", service="redis") from exc
        # Keyed by the subject already; checked again because nothing else may leak.
        chosen = select([f for f in stored if f.subject_id == subject_id], query)
        if only is not None:
            wanted = set(only)
            chosen = [f for f in chosen if f.fact_id in wanted]
        if self._on_read is not None and chosen:
            await self._on_read(subject_id, chosen, via)
        return chosen

    async def head(self, subject_id: str, fact_id: str, *, via: str = "api") -> Head | None:
        """The current head of ``fact_id``'s supersession chain (A → B → C reads as C), in
        one round trip; ``chain`` keeps every id on the way. None for an unknown fact."""
        subject_id = check_subject(subject_id)
        try:
            found = await chain_head(self._store, subject_id, fact_id)
        except SinkError as exc:
            raise ReadUnavailable(f"redis: {exc}", service="redis") from exc
        if found is not None and self._on_read is not None:
            await self._on_read(subject_id, [found.fact], via)
        return found

    async def wait(self, subject_id: str, observation_id: str, timeout_s: float) -> bool:
        """True once the observation is applied (read-your-writes), False after the timeout."""
        subject_id = check_subject(subject_id)
        if not observation_id or len(observation_id) > 256:
            raise InvalidQuery("observation_id: 1 to 256 characters", field="observation_id")
        try:
            return await self._store.wait_for_observation(subject_id, observation_id, timeout_s)
        except SinkError as exc:
            raise ReadUnavailable(f"redis: {exc}", service="redis") from exc

    async def ping(self) -> None:
        try:
            await self._store.ping()
        except SinkError as exc:
            raise ReadUnavailable(f"redis: {exc}", service="redis") from exc

    # -- search ---------------------------------------------------------------

    async def search(
        self,
        subject_id: str,
        text: str,
        *,
        k: int = 5,
        query: FactQuery = FactQuery(),  # noqa: B008 - frozen, shared safely
        via: str = "api",
    ) -> list[SearchHit]:
        """Up to ``k`` of the subject's facts nearest ``text`` in meaning, best first.

        Among the facts ``query`` selects (the current ones by default). The cold tier
        is searched too whenever the query may want more than current facts: it holds
        the archived facts and, once a forget pass moved them, the superseded ones.
        """
        subject_id = check_subject(subject_id)
        if not text.strip() or len(text) > MAX_QUERY_CHARS:
            raise InvalidQuery(f"q: 1 to {MAX_QUERY_CHARS} characters, not blank", field="q")
        if not 1 <= k <= MAX_K:
            raise InvalidQuery(f"k: between 1 and {MAX_K}", field="k")
        index = await self._index()
        try:
            scored = await index.nearest(subject_id, text, k=k * _OVERFETCH, floor=-1.0)
            if not query.present:
                scored += await index.nearest(
                    subject_id, text, k=k * _OVERFETCH, floor=-1.0, tier="cold"
                )
        except SinkError as exc:
            raise ReadUnavailable(f"milvus: {exc}", service="milvus") from exc
        except SlotwiseError as exc:  # the embedder's errors
            raise ReadUnavailable(f"embedder: {exc}", service="embedder") from exc
        scores = {fact_id: score for fact_id, score in scored}
        facts = await self.facts(subject_id, query, only=list(scores), via=f"{via}+search")
        hits = sorted(
            (SearchHit(f, scores[f.fact_id]) for f in facts),
            key=lambda h: (-h.score, h.fact.fact_id),
        )
        return hits[:k]

    async def _index(self) -> Nearest:
        if self._vectors is None:
            if self._vectors_factory is None:
                raise ReadUnavailable("search is not configured", service="milvus")
            async with self._vectors_lock:
                if self._vectors is None:
                    try:
                        self._vectors = await self._vectors_factory()
                    except SlotwiseError as exc:
                        raise ReadUnavailable(f"search: {exc}", service="milvus") from exc
        return self._vectors

    # -- logged events ----------------------------------------------------------

    async def supersessions(self, subject_id: str, *, limit: int = 50) -> LogPage:
        """The subject's newest supersession events (read_committed), newest first."""
        return await self._logged("supersessions", subject_id, limit, SupersessionEvent)

    async def review(self, subject_id: str, *, limit: int = 50) -> LogPage:
        """The subject's newest review items, newest first."""
        return await self._logged("review", subject_id, limit, ReviewItem)

    async def erasures(self, subject_id: str, *, limit: int = 1) -> LogPage:
        """The subject's newest erasure attestations, newest first."""
        return await self._logged("erasures", subject_id, limit, ErasureAttestation)

    async def _logged(self, kind: str, subject_id: str, limit: int, model: type[Any]) -> LogPage:
        subject_id = check_subject(subject_id)
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidQuery(f"limit: between 1 and {MAX_LIMIT}", field="limit")
        if self._log is None or self._topics is None:
            raise ReadUnavailable("topic reads are not configured", service="kafka")
        topic = getattr(self._topics, kind)
        try:
            return await asyncio.to_thread(self._log.newest, topic, subject_id, limit, (model,))
        except LogUnavailable as exc:
            raise ReadUnavailable(f"kafka: {exc}", service="kafka") from exc


def _embedder(settings: Settings) -> Embedder:
    """The worker's embedder, imported only now."""
    from slotwise.streams.read.embedder_choice import configured_embedder  # noqa: PLC0415 - kept off import

    return configured_embedder(settings)
