"""The asyncio client: what an agent does with its memory, in its own process.

    async with AsyncClient() as memory:
        await memory.publish(observation)
        await memory.wait(subject, observation.observation_id, timeout=10)
        facts = await memory.facts(subject)
        await memory.erase(subject, attribute="employer", timeout=60)   # the attestation

It reads exactly as ``slotwise facts`` and the HTTP API do
(:class:`slotwise.streams.read.reads.Reads`), from the deployment its
:class:`~slotwise.streams.config.Settings` name (``SLOTWISE_*`` variables
by default). Importing it loads no model and no Milvus client: those come
with the first :meth:`AsyncClient.search`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, TypeVar

from pydantic import ValidationError

from slotwise.client.exceptions import InvalidRequest, Unavailable, WaitTimeout
from slotwise.client.publishing import Published, Publisher, Writable
from slotwise.client.subscription import AsyncSubscription, Subscription
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import FactQuery, InvalidQuery, Reads, ReadUnavailable, SearchHit
from slotwise.topics.records import Command, CommandKind, ErasureAttestation, Fact

__all__ = ["AsyncClient", "wait_attestation"]

T = TypeVar("T")


async def _translated(call: Callable[[], Awaitable[T]]) -> T:
    try:
        return await call()
    except InvalidQuery as exc:
        raise InvalidRequest(str(exc), field=exc.field) from exc
    except ReadUnavailable as exc:
        raise Unavailable(str(exc), service=exc.service) from exc


def _command(subject_id: str, kind: CommandKind, **fields: Any) -> Command:
    try:
        return Command(
            command_id=str(uuid.uuid4()),
            subject_id=subject_id,
            command=kind,
            issued_at=datetime.now(UTC),
            **fields,
        )
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise InvalidRequest(f"{field}: {first['msg']}", field=field) from None


async def wait_attestation(
    reads: Reads, subject_id: str, command_id: str, timeout_s: float
) -> ErasureAttestation | None:
    """The attestation of erase ``command_id``, read back from the subject's erasures
    partition as the worker publishes it; None after ``timeout_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        page = await reads.erasures(subject_id, limit=20)
        for record in page.records:
            if isinstance(record, ErasureAttestation) and record.command_id == command_id:
                return record
        if loop.time() >= deadline:
            return None
        await asyncio.sleep(0.5)


class AsyncClient:
    """One deployment's memory. Close it (``async with``) to release its connections."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._publisher = Publisher(self.settings)
        self._stack = AsyncExitStack()
        self._reads: Reads | None = None

    async def publish(
        self, record: Writable, *, traceparent: str | None = None, timeout: float = 30.0
    ) -> Published:
        """Publish an observation, a candidate or a command; returns once the broker has it.

        ``traceparent`` defaults to the caller's current OpenTelemetry context.
        """
        return await asyncio.to_thread(
            self._publisher.publish, record, traceparent=traceparent, timeout_s=timeout
        )

    async def wait(self, subject_id: str, observation_id: str, *, timeout: float = 30.0) -> None:
        """Return once the observation is applied (read-your-writes); else :class:`WaitTimeout`."""
        reads = self._open()
        applied = await _translated(lambda: reads.wait(subject_id, observation_id, timeout))
        if not applied:
            raise WaitTimeout(
                f"observation {observation_id} of {subject_id} not applied within {timeout:g}s"
            )

    async def facts(
        self,
        subject_id: str,
        *,
        as_of: datetime | None = None,
        believed_at: datetime | None = None,
        history: bool = False,
        include_archived: bool = False,
    ) -> list[Fact]:
        """The subject's facts: current ones by default.

        ``as_of``: the facts true at that instant (valid time); ``believed_at``: what
        slotwise believed at that instant (transaction time, from ``recorded_at``);
        ``history``: superseded and historical facts too. Semantics:
        :mod:`slotwise.streams.read.temporal`.
        """
        query = FactQuery(as_of, believed_at, history, include_archived)
        reads = self._open()
        return await _translated(lambda: reads.facts(subject_id, query, via="client"))

    async def search(
        self, subject_id: str, text: str, *, k: int = 5, include_archived: bool = False
    ) -> list[SearchHit]:
        """The subject's current facts nearest ``text`` in meaning (``.fact``, ``.score``).

        A new fact is searchable once the worker's commit has flushed its vector, a
        little after :meth:`wait` returns (that sees the Redis state): within the
        commit interval and one Milvus upsert, typically under a second.
        """
        query = FactQuery(include_archived=include_archived)
        reads = self._open()
        return await _translated(
            lambda: reads.search(subject_id, text, k=k, query=query, via="client")
        )

    async def erase(
        self,
        subject_id: str,
        *,
        fact_id: str | None = None,
        attribute: str | None = None,
        reason: str | None = None,
        timeout: float | None = None,
    ) -> Command | ErasureAttestation:
        """Erase one fact, one attribute's facts or (neither) the whole subject, ordered with
        its writes. Returns the published command; with ``timeout``, the ``erasure/1``
        attestation once the worker has deleted and checked (:class:`WaitTimeout` if not)."""
        if fact_id is not None and attribute is not None:
            raise InvalidRequest("give fact_id or attribute, not both", field="fact_id")
        command = _command(subject_id, "erase", fact_id=fact_id, attribute=attribute, reason=reason)
        await self.publish(command)
        if timeout is None:
            return command
        reads = self._open()
        attested = await _translated(
            lambda: wait_attestation(reads, subject_id, command.command_id, timeout)
        )
        if attested is None:
            raise WaitTimeout(f"no attestation of erase {command.command_id} within {timeout:g}s")
        return attested

    async def forget(self, subject_id: str, *, as_of: datetime | None = None) -> Command:
        """Run the forgetting pass over the subject now, scored as of ``as_of`` (now by
        default) under the worker's policy: facts decayed below its threshold are archived,
        restorable. Returns the published command."""
        instant = as_of or datetime.now(UTC)
        command = _command(
            subject_id, "forget", as_of=instant, reason="forget requested by the client"
        )
        await self.publish(command)
        return command

    async def restore(self, subject_id: str, fact_id: str) -> Command:
        """Bring an archived fact of the subject back to the hot tier. Returns the command."""
        now = datetime.now(UTC)
        command = _command(
            subject_id, "restore", fact_id=fact_id, as_of=now, reason="restored by the client"
        )
        await self.publish(command)
        return command

    def subscribe(
        self, topic: str, group: str, *, from_beginning: bool = False
    ) -> AsyncSubscription:
        """``async for record in client.subscribe("supersessions", group="my-agent")``."""
        return AsyncSubscription(
            Subscription(self.settings, topic, group, from_beginning=from_beginning)
        )

    async def close(self) -> None:
        await asyncio.to_thread(self._publisher.close)
        await self._stack.aclose()
        self._reads = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _open(self) -> Reads:
        if self._reads is None:
            self._reads = Reads.open(self.settings, self._stack)
        return self._reads
