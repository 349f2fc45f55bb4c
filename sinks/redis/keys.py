"""Every key slotwise keeps in Redis, by name: the one place a key is spelled.

A subject's keys share the hash tag ``{subject}`` (Redis Cluster keeps them on
one slot, so one script may touch all of them); the part after the tag is the
key's *kind*::

    <prefix>:{<subject>}:facts         hash  fact_id → Fact JSON (latest state)
    <prefix>:{<subject>}:slots         zset  "<slot>\\0<fact_id>" of every current fact, score 0
    <prefix>:{<subject>}:current       hash  fact_id → <slot> of every current fact
    <prefix>:{<subject>}:meta          hash  version, watermark, updated_at
    <prefix>:{<subject>}:applied       hash  event_id → outputs blob stored when it was applied
    <prefix>:{<subject>}:applied_at    zset  event_id by apply time (ms), for pruning
    <prefix>:{<subject>}:observations  zset  observation_id by apply time (ms)
    <prefix>:{<subject>}:observed      channel  observation ids as they are applied
    <prefix>:{<subject>}:access_at     zset  fact_id by last read (ms)        (access.py)
    <prefix>:{<subject>}:access_n      hash  fact_id → reads                  (access.py)
    <prefix>:{<subject>}:archived      zset  "<slot>\\0<fact_id>" per archived fact (cold.py)
    <prefix>:{<subject>}:dependents    zset  "<source>\\0<derived>", score 0  (provenance.py)
    <prefix>:{<subject>}:compared      set   pair keys asked about            (provenance.py)
    <prefix>:{<subject>}:review        hash  review_id → ReviewItem JSON      (review.py)
    <prefix>:{<subject>}:review_open   zset  open review_id by created_at     (review.py)
    <prefix>:{<subject>}:rejected      set   rejection keys                   (review.py)
    <prefix>:{<subject>}:erasing       hash  command_id → erase progress      (erasure.py)

A fact is in the slot index (``slots`` and ``current``) iff its status is
``current``; every script that writes a fact keeps that rule through the one
definition in ``lua/slot_index.lua``. ``<slot>`` is ``a:<attribute>``, or
``-`` for facts without an attribute: one slot's facts are a lexicographic
range of ``slots``.

The deployment's own keys carry no subject tag (a subject may be called
"commits": its erasure must not take them along)::

    <prefix>:commits:<group>                   commit marks           (commits.py)
    <prefix>:review_index                      review_id → subject    (review.py)
    <prefix>:migration                         the migration's step   (migration.py)
    <prefix>:adapter:<version>, :adapter:enabled  drift adapters      (adapters.py)
    <prefix>:replica-ack                       WAIT's own write       (replicas.py)
    <prefix>:tokens                            API token → grant      (tokens.py)
    <prefix>:{rebuild:<scope>}:offsets|subjects  a rebuild's progress (rebuild.py)

The subject id is percent-encoded in key names, so a subject id holding ``}``
or glob characters can neither move keys to another hash slot nor make one
subject's key pattern match another's.
"""

from __future__ import annotations

import functools
from urllib.parse import quote, unquote

__all__ = [
    "ACCESS_AT",
    "ACCESS_KINDS",
    "ACCESS_N",
    "APPLIED",
    "APPLIED_AT",
    "ARCHIVED",
    "COMPARED",
    "CURRENT",
    "DEPENDENTS",
    "ERASING",
    "FACTS",
    "META",
    "OBSERVATIONS",
    "OBSERVED",
    "PROVENANCE_KINDS",
    "REJECTED",
    "REVIEW",
    "REVIEW_KINDS",
    "REVIEW_OPEN",
    "SLOTS",
    "SLOT_INDEX_KINDS",
    "STORE_KINDS",
    "UNSLOTTED",
    "KeyLayout",
    "slot_field",
    "slot_member",
]

# RedisStore's own kinds (store.py).
FACTS = "facts"
SLOTS = "slots"
CURRENT = "current"
META = "meta"
APPLIED = "applied"
APPLIED_AT = "applied_at"
OBSERVATIONS = "observations"
OBSERVED = "observed"  # a pub/sub channel, not a key: no inventory lists it
# Kinds the stores built on RedisStore add under the same tag.
ACCESS_AT = "access_at"
ACCESS_N = "access_n"
ARCHIVED = "archived"
DEPENDENTS = "dependents"
COMPARED = "compared"
REVIEW = "review"
REVIEW_OPEN = "review_open"
REJECTED = "rejected"
ERASING = "erasing"

STORE_KINDS = (FACTS, SLOTS, CURRENT, META, APPLIED, APPLIED_AT, OBSERVATIONS)
SLOT_INDEX_KINDS = (SLOTS, CURRENT)
ACCESS_KINDS = (ACCESS_AT, ACCESS_N)
PROVENANCE_KINDS = (DEPENDENTS, COMPARED)
REVIEW_KINDS = (REVIEW, REVIEW_OPEN, REJECTED)

UNSLOTTED = "-"
# Kept readable in key names; everything else (notably "{", "}", "%" and the
# glob characters "*?[]\\") is percent-encoded.
_SAFE = "!$&'()+,-./:;=@_~"
_GLOB = str.maketrans({c: "\\" + c for c in "*?[]\\"})


# Every key a candidate touches is built from its subject's tag, a dozen a candidate;
# percent-encoding the id each time was 0.6 % of the exact path's worker CPU.
@functools.lru_cache(maxsize=4096)
def _quoted(subject_id: str) -> str:
    return quote(subject_id, safe=_SAFE)


def slot_field(attribute: str | None) -> str:
    """The slot of a fact of ``attribute`` (None: the unslotted facts), as the indexes name it."""
    if attribute is None:
        return UNSLOTTED
    if "\0" in attribute:
        # NUL separates the slot from the fact id in the slot index.
        raise ValueError(f"attribute {attribute!r} contains a NUL character")
    return f"a:{attribute}"


def slot_member(attribute: str | None, fact_id: str) -> str:
    """A fact's member in a by-slot sorted set (``slots``, ``archived``)."""
    return f"{slot_field(attribute)}\0{fact_id}"


class KeyLayout:
    """The key names under one deployment's ``prefix``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def tag(self, subject_id: str) -> str:
        """``<prefix>:{<subject>}``: what every key of the subject starts with."""
        return f"{self.prefix}:{{{_quoted(subject_id)}}}"

    def key(self, subject_id: str, kind: str) -> str:
        return f"{self.tag(subject_id)}:{kind}"

    def kind_of(self, subject_id: str, key: str) -> str:
        """The kind of one of the subject's keys (its name past the tag)."""
        return key.removeprefix(self.tag(subject_id) + ":")

    def subject_pattern(self, subject_id: str) -> str:
        """A SCAN pattern matching every key of the subject and no other subject's."""
        return self.tag(subject_id).translate(_GLOB) + ":*"

    def kind_pattern(self, kind: str) -> str:
        """A SCAN pattern matching the ``kind`` key of every subject."""
        return f"{self.prefix.translate(_GLOB)}:{{*}}:{kind}"

    def subject_of(self, key: str, kind: str) -> str:
        """The subject whose ``kind`` key ``key`` is (a key ``kind_pattern`` matched)."""
        return unquote(key[len(self.prefix) + 2 : -len(f"}}:{kind}")])

    # -- the deployment's own keys -------------------------------------------------

    def commit_marks(self, group: str) -> str:
        return f"{self.prefix}:commits:{group}"

    @property
    def review_index(self) -> str:
        return f"{self.prefix}:review_index"

    @property
    def migration(self) -> str:
        return f"{self.prefix}:migration"

    def adapter(self, version: str) -> str:
        return f"{self.prefix}:adapter:{version}"

    @property
    def enabled_adapter(self) -> str:
        return f"{self.prefix}:adapter:enabled"

    @property
    def tokens(self) -> str:
        return f"{self.prefix}:tokens"

    @property
    def replica_ack(self) -> str:
        return f"{self.prefix}:replica-ack"

    def rebuild_progress(self, scope: str, kind: str) -> str:
        return f"{self.prefix}:{{rebuild:{quote(scope, safe='')}}}:{kind}"
