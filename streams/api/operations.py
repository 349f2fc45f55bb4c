"""What a write does, once, for the HTTP routes (``writes.py``) and the MCP tools
(``mcp_server.py``): build the record the worker reads, publish it as the worker expects
(:class:`~slotwise.client.publishing.Publisher`: the subject's key, the worker's
partitioner and limits), and, when asked to wait, read back what was decided.

A field a record refuses is an :class:`~slotwise.client.exceptions.InvalidRequest`
naming it; Kafka or Redis failing is ``Unavailable`` / ``PublishFailed``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from redis.exceptions import RedisError

from slotwise.client.aio import wait_attestation
from slotwise.client.exceptions import InvalidRequest, Unavailable
from slotwise.client.publishing import Published, Publisher, Writable
from slotwise.processors.model import stable_id
from slotwise.sinks.redis.keys import APPLIED
from slotwise.sinks.redis.replies import as_bytes
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.api.bodies import CandidateIn, ObservationIn
from slotwise.streams.api.telemetry import memory_span
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import FactQuery, SearchHit
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.codec import decode_record, encode_record
from slotwise.topics.exceptions import RecordError
from slotwise.topics.records import (
    CandidateFact,
    Command,
    Fact,
    Observation,
    ReviewItem,
    SupersessionEvent,
)

if TYPE_CHECKING:
    from slotwise.streams.api.serve import State

__all__ = [
    "CommandReviews",
    "archived_subject",
    "candidate",
    "check_texts",
    "command",
    "erase",
    "issue",
    "observation",
    "observation_outcome",
    "outcome_of",
    "publish",
    "read_facts",
    "search_facts",
    "subject_of_archived",
    "write_records",
]

_POLL_S = 0.2


def _invalid(exc: ValidationError) -> InvalidRequest:
    first = exc.errors(include_url=False)[0]
    field = ".".join(str(p) for p in first.get("loc", ())) or None
    return InvalidRequest(f"{field or 'body'}: {first['msg']}", field=field)


def _record(build: Callable[[], Writable]) -> Writable:
    try:
        record = build()
        # What JSON cannot carry (a lone surrogate in a string) is the caller's to fix.
        encode_record(record)
    except ValidationError as exc:
        raise _invalid(exc) from None
    except (TypeError, ValueError) as exc:
        raise InvalidRequest(f"body: not encodable as JSON: {exc}") from None
    return record


async def read_facts(state: State, subject_id: str, query: FactQuery, via: str) -> list[Fact]:
    """The subject's facts (as :meth:`Reads.facts`), as a ``search_memory`` span."""
    with memory_span("search_memory", subject_id) as span:
        found = await state.reads.facts(subject_id, query, via=via)
        span.set_attribute("gen_ai.memory.record.count", len(found))
        return found


async def search_facts(
    state: State, subject_id: str, text: str, *, k: int, query: FactQuery, via: str
) -> list[SearchHit]:
    """The subject's facts nearest ``text`` (as :meth:`Reads.search`), as a ``search_memory``
    span."""
    with memory_span("search_memory", subject_id) as span:
        hits = await state.reads.search(subject_id, text, k=k, query=query, via=via)
        span.set_attribute("gen_ai.memory.record.count", len(hits))
        return hits


def outcome_of(blobs: Sequence[bytes]) -> dict[str, Any]:
    """What applied events decided (each decision with its reason) and the facts,
    supersessions and review items they published, from the outputs each stored
    with its state change."""
    found: dict[str, list[Any]] = {"decisions": [], "facts": [], "supersessions": [], "review": []}
    for blob in blobs:
        stored = StoredOutputs.decode(blob)
        if stored.decision is not None:
            found["decisions"].append({"decision": stored.decision, "reason": stored.reason})
        for message in stored.messages:
            try:
                record = decode_record(message.value)
            except RecordError:
                continue  # a tombstone
            name = _KINDS.get(type(record))
            if name is not None:
                found[name].append(record.model_dump(mode="json", by_alias=True))
    return found


_KINDS: dict[type, str] = {Fact: "facts", SupersessionEvent: "supersessions", ReviewItem: "review"}
# The extractors derive a candidate's id from the observation: stable_id(<extractor>,
# observation_id, <n>) (processors/rules/extractor.py, models/extractor.py), so the
# decisions an observation led to are found without a scan.
_EXTRACTORS = ("rules", "llm")
_MAX_CANDIDATES = 64


async def observation_outcome(
    store: RedisStore, subject_id: str, observation_id: str
) -> list[bytes]:
    """The outputs of the candidates an applied observation was extracted into."""
    ids = [
        stable_id(k, observation_id, str(n)) for k in _EXTRACTORS for n in range(_MAX_CANDIDATES)
    ]
    try:
        blobs = await store.client.hmget(store.key(subject_id, APPLIED), ids)
    except RedisError as exc:
        raise Unavailable(f"redis: {exc}", service="redis") from exc
    return [as_bytes(b) for b in blobs if b is not None]


class CommandReviews:
    """A review decision as the CLI takes it: a ``review`` command whose id is derived from
    the item, the action and the value, so the same decision twice is applied once."""

    def __init__(self, publisher: Publisher) -> None:
        self._publisher = publisher

    async def decide(
        self, subject_id: str, review_id: str, action: str, value: str | None = None
    ) -> str:
        command = _record(
            lambda: Command(
                command_id=stable_id("review-decision", review_id, action, repr(value)),
                subject_id=subject_id,
                command="review",
                issued_at=datetime.now(UTC),
                review_id=review_id,
                action=action,  # type: ignore[arg-type]
                value=value,
                reason=f"decided over HTTP: {action}",
            )
        )
        with memory_span("update_memory", subject_id):
            await asyncio.to_thread(self._publisher.publish, command)
        return command.command_id  # type: ignore[union-attr]


async def publish(state: State, records: Sequence[Writable]) -> list[Published]:
    def send() -> list[Published]:
        return [state.publisher.publish(r) for r in records]

    return await asyncio.to_thread(send)


async def _applied(state: State, subject_id: str, event_id: str, deadline: float) -> bytes | None:
    """The outputs of ``event_id`` once applied (polled until ``deadline``)."""
    loop = asyncio.get_running_loop()
    while True:
        blob = await state.store.applied(subject_id, event_id)
        if blob is not None or loop.time() >= deadline:
            return blob
        await asyncio.sleep(_POLL_S)


def _deadline(state: State, wait: float) -> float:
    return asyncio.get_running_loop().time() + min(wait, state.max_wait_s)


async def write_records(
    state: State, subject_id: str, records: Sequence[Writable], ids: list[str], wait: float
) -> dict[str, Any]:
    """Publish ``records`` (one subject's observations or candidates) in order; with
    ``wait`` seconds, what the write path decided for each once applied."""
    with memory_span("update_memory", subject_id) as span:
        span.set_attribute("gen_ai.memory.record.count", len(records))
        published = await publish(state, records)
    written = []
    deadline = _deadline(state, wait)
    loop = asyncio.get_running_loop()
    for record, event_id, where in zip(records, ids, published, strict=True):
        blobs: list[bytes] | None = None
        if wait and isinstance(record, Observation):
            remaining = max(0.0, deadline - loop.time())
            if await state.reads.wait(subject_id, event_id, remaining):
                blobs = await observation_outcome(state.store, subject_id, event_id)
        elif wait:
            blob = await _applied(state, subject_id, event_id, deadline)
            blobs = None if blob is None else [blob]
        written.append(
            {"id": event_id, "partition": where.partition, "offset": where.offset,
             "applied": blobs is not None} | outcome_of(blobs or [])
        )  # fmt: skip
    after = ids[-1] if isinstance(records[-1], Observation) else None
    return {"subject_id": subject_id, "written": written, "after_observation": after}


def observation(
    subject_id: str, body: ObservationIn, now: datetime, where: str | None
) -> Observation:
    def build() -> Observation:
        return Observation(
            observation_id=body.observation_id or str(uuid.uuid4()),
            subject_id=subject_id,
            session_id=body.session_id,
            speaker=body.speaker,
            text=body.text,
            observed_at=body.observed_at or now,
            source=body.source,
            metadata=body.metadata,
        )

    return _located(build, where)  # type: ignore[return-value]


def candidate(subject_id: str, body: CandidateIn, now: datetime, where: str) -> CandidateFact:
    def build() -> CandidateFact:
        fields = body.model_dump(exclude_none=True)
        fields["candidate_id"] = body.candidate_id or str(uuid.uuid4())
        fields.setdefault("observed_at", now)
        return CandidateFact(subject_id=subject_id, **fields)

    return _located(build, where)  # type: ignore[return-value]


def _located(build: Callable[[], Writable], where: str | None) -> Writable:
    try:
        return _record(build)
    except InvalidRequest as exc:
        if where is None:
            raise
        field = f"{where}.{exc.field}" if exc.field else where
        raise InvalidRequest(str(exc), field=field) from None


def check_texts(
    limit: int, records: Sequence[Observation | CandidateFact], where: str | None
) -> None:
    """The worker's text limit, checked for the whole batch before any of it is published."""
    for n, record in enumerate(records):
        if len(record.text.encode()) > limit:
            field = f"{where}.{n}.text" if where else "text"
            raise InvalidRequest(f"{field}: over the limit of {limit} bytes", field=field)


def command(subject_id: str, kind: str, **fields: Any) -> Command:
    """A ``command/1`` for the subject, issued now; a field the record refuses is a 422."""
    return _record(  # type: ignore[return-value]
        lambda: Command(
            command_id=str(uuid.uuid4()),
            subject_id=subject_id,
            command=kind,  # type: ignore[arg-type]
            issued_at=datetime.now(UTC),
            **fields,
        )
    )


async def erase(  # noqa: PLR0917 - the erasure's own fields
    state: State,
    subject_id: str,
    fact_id: str | None,
    attribute: str | None,
    reason: str | None,
    wait: float,
) -> dict[str, Any]:
    """Erase a fact, an attribute or (neither) the whole subject; with ``wait`` seconds,
    the ``erasure/1`` attestation once the worker has deleted and checked."""
    if fact_id is not None and attribute is not None:
        raise InvalidRequest("fact_id: give fact_id or attribute, not both", field="fact_id")
    issued = command(subject_id, "erase", fact_id=fact_id, attribute=attribute, reason=reason)
    with memory_span("delete_memory", subject_id, record_id=fact_id):
        await publish(state, [issued])
    waited = min(wait, state.max_wait_s)
    attested = (
        await wait_attestation(state.reads, subject_id, issued.command_id, waited) if wait else None
    )
    answer = _accepted(issued, attested is not None)
    answer["attestation"] = attested.model_dump(mode="json") if attested else None
    return answer


def _accepted(command: Command, applied: bool) -> dict[str, Any]:
    return {
        "subject_id": command.subject_id,
        "command_id": command.command_id,
        "command": command.command,
        "applied": applied,
    }


async def issue(state: State, issued: Command, wait: float) -> dict[str, Any]:
    """Publish a command; with ``wait`` seconds, whether it was applied and its outcome."""
    with memory_span("update_memory", issued.subject_id, record_id=issued.fact_id):
        await publish(state, [issued])
    blob = await _applied(state, issued.subject_id, issued.command_id,
                          _deadline(state, wait)) if wait else None  # fmt: skip
    answer = _accepted(issued, blob is not None)
    answer["outcome"] = StoredOutputs.decode(blob).reason if blob is not None else None
    return answer


def subject_of_archived(settings: Settings, fact_id: str) -> str | None:
    """The subject of an archived fact, from the deployment's cold tiers; None if in none.
    Blocking (a Milvus client of its own)."""
    from pymilvus import MilvusClient  # noqa: PLC0415 - Milvus only when a restore names no subject

    from slotwise.sinks.milvus.collections import GRPC_OPTIONS  # noqa: PLC0415
    from slotwise.sinks.milvus.tiers import archived_subject as find  # noqa: PLC0415

    token = settings.milvus_token.get_secret_value() if settings.milvus_token else ""
    client = MilvusClient(uri=settings.milvus_uri, token=token, grpc_options=GRPC_OPTIONS)
    try:
        return find(client, settings.milvus_collection_prefix, fact_id)
    finally:
        client.close()


async def archived_subject(state: State, fact_id: str) -> str | None:
    return await asyncio.to_thread(subject_of_archived, state.settings, fact_id)
