"""Scoped API tokens in Redis: only their SHA-256 is kept, with what they may reach.

A token names the subjects it reaches (every subject, an exact id, or every id
starting with a prefix) and the scopes it holds (``read``, ``write``, ``erase``,
``review``). Built on :class:`~slotwise.sinks.redis.store.RedisStore`'s
client, under the deployment's prefix, so every server of the deployment
reads the same tokens::

    <prefix>:tokens         hash  token_id → grant JSON (subjects, match, scopes, note, created_at)

``token_id`` is the hex SHA-256 of the token: the token itself is printed once
by ``slotwise token create`` and never stored. A token is 32 random bytes, so
an unsalted hash is as hard to reverse as the token is to guess.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, get_args

from slotwise.sinks.exceptions import CorruptRecord
from slotwise.sinks.redis.errors import translated
from slotwise.sinks.redis.keys import KeyLayout
from slotwise.sinks.redis.replies import as_bytes
from slotwise.sinks.redis.store import RedisStore

__all__ = ["SCOPES", "Grant", "Match", "Scope", "TokenStore", "token_id"]

Scope = Literal["read", "write", "erase", "review"]
Match = Literal["all", "exact", "prefix"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
_TOKEN_PREFIX = "swt_"


def token_id(token: str) -> str:
    """The id a token is stored under: its SHA-256, in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Grant:
    """What one token may reach: ``subjects`` read as ``match`` says, with ``scopes``."""

    match: Match
    subjects: str
    scopes: frozenset[Scope]
    note: str = ""
    created_at: str = ""

    @classmethod
    def everything(cls, note: str = "") -> Grant:
        return cls("all", "", frozenset(SCOPES), note)

    @classmethod
    def parse(cls, subjects: str, scopes: str, note: str = "") -> Grant:
        """``--subjects``: ``*`` for every subject, ``=ID`` for one exact id, else a prefix
        (``user-42`` reaches ``user-42`` and ``user-42/…``; ``tenant-a/`` a tenant's ids)."""
        wanted = [s.strip() for s in scopes.split(",") if s.strip()]
        unknown = [s for s in wanted if s not in SCOPES]
        if unknown or not wanted:
            raise ValueError(f"scopes: {', '.join(SCOPES)} (comma-separated), not {scopes!r}")
        chosen = frozenset(s for s in SCOPES if s in wanted)
        created = datetime.now(UTC).isoformat()
        if subjects == "*":
            return cls("all", "", chosen, note, created)
        if subjects.startswith("=") and len(subjects) > 1:
            return cls("exact", subjects[1:], chosen, note, created)
        if not subjects.strip():
            raise ValueError("subjects: '*', '=ID' or a non-blank prefix")
        return cls("prefix", subjects, chosen, note, created)

    def reaches(self, subject_id: str) -> bool:
        if self.match == "all":
            return True
        if self.match == "exact":
            return subject_id == self.subjects
        return subject_id.startswith(self.subjects)

    def allows(self, scope: Scope, subject_id: str | None = None) -> bool:
        """``subject_id`` None: an action on no one subject, allowed to an all-subjects grant."""
        if scope not in self.scopes:
            return False
        return self.match == "all" if subject_id is None else self.reaches(subject_id)

    @property
    def single_subject(self) -> str | None:
        """The one subject an exact grant names (what an MCP session binds to)."""
        return self.subjects if self.match == "exact" else None

    def describe(self) -> str:
        reach = {"all": "*", "exact": f"={self.subjects}", "prefix": f"{self.subjects}*"}
        return f"{reach[self.match]} {','.join(sorted(self.scopes))}"

    def encode(self) -> bytes:
        return json.dumps(
            {
                "match": self.match,
                "subjects": self.subjects,
                "scopes": sorted(self.scopes),
                "note": self.note,
                "created_at": self.created_at,
            }
        ).encode()

    @classmethod
    def decode(cls, blob: bytes) -> Grant:
        body = json.loads(blob)
        scopes = frozenset(s for s in body["scopes"] if s in SCOPES)
        return cls(body["match"], body["subjects"], scopes, body["note"], body["created_at"])


class TokenStore:
    """Create, look up, list and revoke tokens in one deployment's Redis."""

    def __init__(self, store: RedisStore, *, prefix: str) -> None:
        self._redis = store.client
        self._key = KeyLayout(prefix).tokens

    async def create(self, grant: Grant) -> str:
        """A new token for ``grant``; only its hash is written. Returns the token (once)."""
        token = _TOKEN_PREFIX + secrets.token_urlsafe(32)
        with translated("creating a token"):
            await self._redis.hset(self._key, token_id(token), grant.encode())
        return token

    async def lookup(self, token: str) -> Grant | None:
        with translated("looking up a token"):
            blob = await self._redis.hget(self._key, token_id(token))
        return None if blob is None else self._decoded(as_bytes(blob))

    async def list(self) -> dict[str, Grant]:
        with translated("listing tokens"):
            stored = await self._redis.hgetall(self._key)
        return {
            as_bytes(key).decode(): self._decoded(as_bytes(blob))
            for key, blob in sorted(stored.items())
        }

    async def revoke(self, token_id_prefix: str) -> int:
        """Revoke every token whose id starts with ``token_id_prefix`` (8+ hex characters)."""
        if len(token_id_prefix) < 8:
            raise ValueError("token id: at least 8 hex characters of it")
        doomed = [k for k in await self.list() if k.startswith(token_id_prefix)]
        if not doomed:
            return 0
        with translated("revoking tokens"):
            return int(await self._redis.hdel(self._key, *doomed))

    def _decoded(self, blob: bytes) -> Grant:
        try:
            return Grant.decode(blob)
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptRecord(
                f"a stored token grant does not decode: {exc}", key=self._key
            ) from exc
