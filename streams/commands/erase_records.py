"""The pure parts of an erasure: its progress record, the redaction of earlier events'
stored outputs, the search of what Redis still holds, and the attestation it publishes.

**Redaction.** Every applied event keeps the outputs it published, for a
replay (``streams/write/outputs.py``). An erasure rewrites the outputs of the events
before it so that a replay of one of them (its offset not yet committed when a
worker crashed) re-emits nothing of the scope and indexes nothing: messages
about an erased fact, its vector rows, and a reason quoting it are dropped;
for a whole subject, everything. The entry itself stays, content-free, so the
replay still finds the event applied and does not decide it afresh, which
would write the erased facts again. Tombstones and attestations of earlier
erasures are kept: they hold ids, not content.

**Residue.** After deleting, what the subject's Redis keys still hold is
searched for the erased fact ids and texts (the stored outputs decoded, since
their messages are base64 inside), and, for a whole subject, for any key or
content beyond the content-free ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Literal

from slotwise.processors.erase_scope import ErasePlan, scope_of
from slotwise.processors.model import stable_id
from slotwise.processors.resolve import fact_id_for
from slotwise.sinks.kafka.retention import Retention
from slotwise.sinks.redis.erasure import KEEP
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import decode_record, dumps, loads
from slotwise.topics.exceptions import RecordError
from slotwise.topics.outbound import Outbound, record_message
from slotwise.topics.records import (
    Command,
    ErasureAttestation,
    ErasureCheck,
    Fact,
    RetainedCopy,
    ReviewItem,
    SupersessionEvent,
)

__all__ = [
    "ERASE_DECISION",
    "Progress",
    "attestation",
    "erase_outputs",
    "redact",
    "redis_residue",
    "retained_copies",
]

ERASE_DECISION = "ERASE"
ERASED_BY = "slotwise.erased-by"


@dataclass(frozen=True, slots=True)
class Progress:
    """What an unfinished erasure has done, kept in Redis until it finishes (content-free
    while ``planned``; once ``deleted``, the texts the checks look for, which go with it).

    ``version`` is the subject's version the plan was made against (``planned``) or
    left by the delete (``deleted``). ``found``: vector rows per collection before
    the first delete. ``ids``: the fact ids erased (for a fact scope, the named id
    too). ``facts``: how many of them Redis held.
    """

    phase: Literal["planned", "deleted"]
    version: int
    started_at: str
    found: dict[str, int]
    deleted: dict[str, int] = field(default_factory=dict)
    ids: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    relinked: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()

    def encode(self) -> bytes:
        return dumps(asdict(self))

    @classmethod
    def decode(cls, blob: bytes) -> Progress:
        body = loads(blob)
        for name in ("ids", "facts", "relinked", "kept", "texts"):
            body[name] = tuple(body.get(name, ()))
        return cls(**body)


def redact(outputs: StoredOutputs, plan: ErasePlan, command_id: str) -> StoredOutputs | None:
    """``outputs`` without the plan's scope, or None when nothing of it is there."""
    erased = plan.erased_set
    messages = [_relinked(m, plan) for m in outputs.messages if not _touches(m, plan, erased)]
    if outputs.decision == ERASE_DECISION:
        # An earlier erasure's: its tombstones and attestation stay; a kept fact it
        # re-linked may be erased now.
        vectors = list(outputs.vectors)
        reason = outputs.reason
    else:
        vectors = [v for v in outputs.vectors if not plan.whole_subject and v.fact_id not in erased]
        reason = outputs.reason
        dropped = len(messages) < len(outputs.messages) or len(vectors) < len(outputs.vectors)
        if reason is not None and (plan.whole_subject or dropped or _quotes(reason, plan)):
            reason = f"erased by {command_id}"
    if (messages, vectors, reason) == (
        list(outputs.messages),
        list(outputs.vectors),
        outputs.reason,
    ):
        return None
    return StoredOutputs.of(messages, vectors, decision=outputs.decision, reason=reason)


def _quotes(reason: str, plan: ErasePlan) -> bool:
    """Whether a reason names an erased fact (by id, or quoting its value or text)."""
    return any(q in reason for q in plan.quoted)


def _relinked(message: Outbound, plan: ErasePlan) -> Outbound:
    """A kept fact's message with its links re-pointed past the erased facts (a replay
    re-emits the chain the erase leaves, not a link to a fact that is gone)."""
    if message.topic != "facts" or message.value is None or plan.whole_subject:
        return message
    fact = decode_record(message.value)
    if not isinstance(fact, Fact):
        return message
    copy = plan.relink(fact)
    return message if copy is None else record_message("facts", fact.fact_id, copy)


def _touches(message: Outbound, plan: ErasePlan, erased: frozenset[str]) -> bool:
    if message.value is None or message.topic == "erasures":
        return False  # a tombstone, an attestation: ids, no content
    if plan.whole_subject:
        return True
    if message.topic == "facts":
        return (message.key or b"").decode() in erased
    try:
        record = decode_record(message.value)
    except RecordError:
        return True  # cannot tell: an erasure keeps nothing it cannot read
    if isinstance(record, SupersessionEvent):
        return bool({record.old_fact_id, record.new_fact_id} & erased)
    if isinstance(record, ReviewItem):
        named = plan.scope == "attribute" and record.candidate.attribute == plan.attribute
        own = fact_id_for(record.candidate) in erased
        return named or own or bool(erased.intersection(record.incumbent_fact_ids))
    return any(t.encode() in message.value for t in plan.texts)


def redis_residue(
    contents: Mapping[str, Sequence[tuple[bytes, bytes]]],
    *,
    ids: Sequence[str],
    texts: Sequence[str],
    whole_subject: bool,
) -> dict[str, int]:
    """How many of the erased ids and texts the subject's keys still hold, and, for a
    whole subject (``by_subject``), how many keys or stored outputs still carry content.

    An id is looked for in every byte (uuid-shaped tokens, or as a substring); a text
    as an exact string value anywhere in the JSON held (stored outputs decoded), and as
    a substring of free prose (reasons, values that are not JSON). Event ids, their
    apply times and observation ids are ids, not content: only ids are looked for there.
    """
    held = _Held()
    leftovers = 0
    for kind, entries in contents.items():
        if kind == "applied":
            for event, blob in entries:
                outputs = StoredOutputs.decode(blob)
                shown = held.outputs(event, outputs)
                leftovers += whole_subject and outputs.decision != ERASE_DECISION and shown
            continue
        leftovers += whole_subject and kind not in KEEP
        for pair in entries:
            held.raw.extend(pair)
            if kind not in _ID_KINDS:
                for part in pair:
                    held.value(part)
    found = {"by_fact_id": held.count_ids(ids), "by_text": held.count_texts(texts)}
    if whole_subject:
        found["by_subject"] = leftovers
    return found


# Kinds holding only ids and scores (RedisStore's layout): no text can be there.
_ID_KINDS = frozenset({"applied_at", "observations", "slots", "current", "meta"})
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class _Held:
    """What a subject's keys hold, indexed for the residue search."""

    raw: list[bytes] = field(default_factory=list)
    strings: set[str] = field(default_factory=set)
    prose: list[str] = field(default_factory=list)

    def outputs(self, event: bytes, outputs: StoredOutputs) -> bool:
        """Index what stored outputs would re-emit (an erasure's tombstone keys and
        attestations left out: they name ids by design); whether anything was there."""
        self.raw.append(event)
        shown = False
        for m in outputs.messages:
            if m.value is not None and m.topic != "erasures":
                self.raw += [m.key or b"", m.value]
                self.value(m.value)
                shown = True
        for row in outputs.vectors:
            self.raw.append(row.fact_id.encode())
            self.strings.add(row.text)
            shown = True
        reason = outputs.reason
        if reason and outputs.decision != ERASE_DECISION and not reason.startswith("erased by "):
            self.prose.append(reason)
            shown = True
        return shown

    def value(self, raw: bytes) -> None:
        try:
            body = loads(raw)
        except ValueError:
            self.prose.append(raw.decode("utf-8", "replace"))
            return
        pending = [body]
        while pending:
            item = pending.pop()
            if isinstance(item, str):
                self.strings.add(item)
            elif isinstance(item, dict):
                pending += item.values()
            elif isinstance(item, list):
                pending += item

    def count_ids(self, ids: Sequence[str]) -> int:
        tokens = {t.decode() for part in self.raw for t in _UUID.findall(part)}
        joined = b"\x00".join(self.raw)
        return sum(
            1
            for i in ids
            if i in tokens or (not _UUID.fullmatch(i.encode()) and i.encode() in joined)
        )

    def count_texts(self, texts: Sequence[str]) -> int:
        prose = "\x00".join(self.prose)
        return sum(1 for t in texts if t in self.strings or t in prose)


_HOLDS: dict[str, tuple[Literal["slotwise", "producers"], str]] = {
    "candidates": ("slotwise", "the scope's candidate facts and commands published before "
                   "the erase (their text)"),
    "supersessions": ("slotwise", "supersession events of the erased facts (old and new text)"),
    "review": ("slotwise", "review items of the scope (the candidate's text)"),
    "facts": ("slotwise", "earlier values of the erased fact ids, behind their tombstones "
              "until the log cleaner compacts them"),
    "deadletter": ("slotwise", "the subject's records that failed validation (original bytes)"),
    "erasures": ("slotwise", "this attestation and earlier ones (scope and reason; no fact "
                 "content)"),
    "observations": ("producers", "the chat turns producers published: slotwise never writes "
                     "this topic and cannot remove them"),
}  # fmt: skip


def retained_copies(
    catalogue: Catalogue, retention: Retention, completed_at: datetime
) -> tuple[RetainedCopy, ...]:
    """The append-only topics that may still hold the scope, with when retention ends it."""
    copies = []
    for kind, (reach, holds) in _HOLDS.items():
        topic = str(getattr(catalogue, kind))
        spec = retention.topics.get(topic)
        if spec is None:
            continue
        expires = retention.expires_by(topic, completed_at)
        if reach == "producers":
            note = (
                "outside slotwise's reach; shorten it with the topic's retention.ms and "
                "segment.ms, and erase the producers' own copies"
            )
        elif spec.deletes:
            note = "deleted with its segment by retention (retention.ms, segment.ms)"
        elif expires is None:
            note = "no time bound: the topic sets no max.compaction.lag.ms"
        else:
            note = "compacted behind the tombstones within max.compaction.lag.ms"
        copies.append(
            RetainedCopy(
                store=f"kafka:{topic}",
                holds=holds,
                reach=reach,
                cleanup_policy=spec.cleanup_policy,
                retention_ms=spec.retention_ms if spec.deletes else spec.max_compaction_lag_ms,
                expires_by=expires,
                note=note,
            )
        )
    return tuple(copies)


def attestation(
    command: Command,
    *,
    deleted: Mapping[str, int],
    checks: Sequence[ErasureCheck],
    retained: Sequence[RetainedCopy],
    attempts: int,
    completed_at: datetime,
) -> ErasureAttestation:
    """The ``erasure/1`` record: verified only if checks were made and found nothing."""
    remaining: dict[str, int] = {}
    for check in checks:
        remaining[check.store] = remaining.get(check.store, 0) + check.found
    scope = scope_of(command)
    return ErasureAttestation(
        attestation_id=stable_id("erasure", command.command_id),
        subject_id=command.subject_id,
        command_id=command.command_id,
        deleted=dict(deleted),
        remaining=remaining,
        verified=bool(checks) and not any(remaining.values()),
        completed_at=completed_at,
        scope=scope,
        attribute=command.attribute,
        fact_id=command.fact_id,
        reason=command.reason,
        requested_at=command.issued_at,
        attempts=attempts,
        checks=tuple(checks),
        retained=tuple(retained),
    )


def erase_outputs(
    attested: ErasureAttestation, tombstones: Iterable[str], relinked: Sequence[Fact]
) -> StoredOutputs:
    """What the erase publishes: a tombstone per erased fact on the compacted facts topic,
    the new state of each re-linked fact, and the attestation."""
    header = ((ERASED_BY, attested.command_id.encode()),)
    messages = [Outbound("facts", fact_id.encode(), None, header) for fact_id in tombstones]
    messages += [record_message("facts", fact.fact_id, fact) for fact in relinked]
    messages.append(record_message("erasures", attested.subject_id, attested))
    return StoredOutputs.of(
        messages,
        decision=ERASE_DECISION,
        reason=f"erase of the {attested.scope}: verified {str(attested.verified).lower()}",
    )
