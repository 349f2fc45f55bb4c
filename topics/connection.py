"""How every slotwise Kafka client is told where the brokers are.

A *connection* is either the bootstrap servers alone (``"host:9092,…"``), or a
rendered librdkafka configuration carrying the brokers and their security
settings — what ``Settings.librdkafka()`` returns. Each client adds its own
dotted keys on top; none spells ``bootstrap.servers`` itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["Connection", "client_config"]

Connection = str | Mapping[str, Any]


def client_config(connection: Connection, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The librdkafka configuration of one client: the connection, then ``extra``."""
    base = {"bootstrap.servers": connection} if isinstance(connection, str) else dict(connection)
    return {**base, **(extra or {})}
