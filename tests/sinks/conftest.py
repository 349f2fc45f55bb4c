"""Fixtures of the sink tests against the real services."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    """A fresh Redis key prefix; every key under it is deleted afterwards (nothing here
    flushes the shared database)."""
    name = f"swtest-{uuid.uuid4().hex[:8]}"
    yield name
    client = redis.Redis.from_url(redis_url)
    doomed = list(client.scan_iter(match=f"{name}:*", count=1000))
    if doomed:
        client.delete(*doomed)
    client.close()
