"""How a slotwise process reaches Redis: one URL, or the primary the Sentinels name.

With Sentinels the client asks them for the current primary whenever it opens
a connection; after a failover, connections to the old primary fail (or are
refused as read-only once it is demoted), the store's callers see
``StoreUnavailable`` and retry, and the new connections go to the promoted
replica: no proxy, no restart. Each change of primary this process sees is
counted in ``slotwise_redis_failovers_total`` and logged.

The URL still gives what the primary needs besides its address (database,
user, password, TLS); its host and port are ignored when Sentinels are given.
Either way the pool makes a caller wait for a free connection instead of
failing past its size (``RedisStore.from_url`` says why), and each new
connection tells the client's :class:`~slotwise.sinks.redis.identity.ServerIdentity`
which server process it reached.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from prometheus_client import Counter
from redis.asyncio.connection import AbstractConnection, BlockingConnectionPool, parse_url
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool

from slotwise.sinks.redis.identity import ServerIdentity

__all__ = ["REDIS_FAILOVERS", "redis_client"]

log = logging.getLogger(__name__)

REDIS_FAILOVERS = Counter(
    "slotwise_redis_failovers_total",
    "Times the Redis primary named by the Sentinels changed under this process",
)


class _IdentifyingPool(BlockingConnectionPool):
    """A pool whose every new connection reports its server to ``identity``."""

    identity: ServerIdentity | None = None  # set once, right after the pool is made

    def make_connection(self) -> AbstractConnection:
        connection: AbstractConnection = super().make_connection()  # type: ignore[no-untyped-call]
        if self.identity is not None:
            connection.register_connect_callback(self.identity.on_connect)  # type: ignore[no-untyped-call]
        return connection


class _FollowingPool(SentinelConnectionPool, _IdentifyingPool):
    """Sentinel's pool that waits for a free connection, and counts changes of primary."""

    async def get_master_address(self) -> Any:
        before = self.master_address
        address = await super().get_master_address()  # type: ignore[no-untyped-call]
        if before is not None and address != before:
            REDIS_FAILOVERS.inc()
            log.warning("redis primary %s moved from %s to %s", self.service_name, before, address)
        return address


def redis_client(
    url: str,
    *,
    sentinels: Sequence[tuple[str, int]] = (),
    master: str = "slotwise",
    timeout_s: float = 5.0,
    max_connections: int = 64,
    identity: ServerIdentity | None = None,
) -> aioredis.Redis:
    """A client returning bytes, on its own blocking pool of ``max_connections``; its
    connections report their server to ``identity`` when given."""
    options: dict[str, Any] = {
        "decode_responses": False,
        "socket_timeout": timeout_s,
        "socket_connect_timeout": timeout_s,
    }
    if not sentinels:
        pool = _IdentifyingPool.from_url(
            url, max_connections=max_connections, timeout=None, **options
        )
        pool.identity = identity
        return aioredis.Redis.from_pool(pool)
    primary: dict[str, Any] = {k: v for k, v in parse_url(url).items() if k not in ("host", "port")}
    if primary.pop("connection_class", None) is not None:  # rediss://: Sentinel's TLS class
        primary["ssl"] = True
    sentinel = Sentinel(
        list(sentinels),
        sentinel_kwargs={"socket_timeout": timeout_s, "socket_connect_timeout": timeout_s},
    )
    sized: dict[str, Any] = {"max_connections": max_connections, "timeout": None, **primary}
    client: aioredis.Redis = sentinel.master_for(
        master, connection_pool_class=_FollowingPool, **sized, **options
    )
    client.connection_pool.identity = identity  # type: ignore[attr-defined]
    return client
