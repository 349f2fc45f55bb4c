"""Which Redis server a client's connections reach, and how often that server changed.

A write Redis acknowledged can still be lost: the primary dies before its
replicas have it and a replica is promoted, or a Redis restarts from an AOF
short of its last second. Every such loss comes with a new server process
behind the client's connections: another node, or the same node restarted.
Redis names each process by its ``run_id`` (``INFO server``), so
:class:`ServerIdentity` asks every new connection for it, once, when it
connects; :attr:`ServerIdentity.generation` counts the changes. The
worker's checkpoint compares it before each commit: events applied before a
change may have been applied to a server that no longer holds them, so they are
replayed instead of committed (``streams/runtime/checkpoint.py``).

Events still running meanwhile must not write to the new server either: one
applied there before the replay of an earlier event it lost would land out of
the log's order. So a process that :meth:`accepts <ServerIdentity.accept>` a
server *fences* its applies to it: ``lua/apply.lua`` compares the server's
``run_id`` with :attr:`ServerIdentity.token` and refuses on any other, until
the worker, its replay under way, accepts the new one.

A connection is opened per pool slot and kept, so the question costs one round
trip per connection, not per command.
"""

from __future__ import annotations

import logging

from prometheus_client import Counter
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ResponseError

__all__ = ["SERVER_CHANGES", "ServerIdentity"]

log = logging.getLogger(__name__)

SERVER_CHANGES = Counter(
    "slotwise_redis_server_changes_total",
    "Times the Redis server behind this process's connections changed (failover, restart)",
)


class ServerIdentity:
    """The ``run_id`` of the server last connected to, and a count of its changes."""

    def __init__(self) -> None:
        self.run_id: bytes | None = None
        self.generation = 0
        self._fencing = False
        self._accepted: bytes | None = None

    @property
    def token(self) -> bytes:
        """The ``run_id`` applies are fenced to; empty while nothing is fenced."""
        return self._accepted or b""

    def accept(self) -> None:
        """Fence applies to the server connected to now (or to the first one, if none yet)."""
        self._fencing = True
        self._accepted = self.run_id

    def seen(self, run_id: bytes) -> None:
        if self._fencing and self._accepted is None:
            self._accepted = run_id
        if self.run_id is not None and run_id != self.run_id:
            self.generation += 1
            SERVER_CHANGES.inc()
            log.warning(
                "the Redis server changed (run_id %s -> %s): what it held of the "
                "uncommitted writes is not known",
                self.run_id.decode(errors="replace"),
                run_id.decode(errors="replace"),
            )
        self.run_id = run_id

    async def on_connect(self, connection: AbstractConnection) -> None:
        """A connection's connect callback (``register_connect_callback``)."""
        try:
            await connection.send_command("INFO", "server")
            info = await connection.read_response()
        except ResponseError:
            return  # a proxy that refuses INFO: no server to recognise, so no change to see
        except BaseException:
            await connection.disconnect()
            raise
        self.seen(_run_id(info))


def _run_id(info: object) -> bytes:
    text = info if isinstance(info, bytes) else str(info).encode()
    for line in text.splitlines():
        if line.startswith(b"run_id:"):
            return line.removeprefix(b"run_id:").strip()
    return b""  # a server that does not say: the same answer every time, never a change
