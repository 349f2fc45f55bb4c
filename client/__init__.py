"""slotwise from an agent's own process: publish, wait, read, search, subscribe.

    from slotwise.client import Client, Observation

    with Client() as memory:                       # SLOTWISE_* settings
        memory.publish(turn)                       # keyed and partitioned as the worker needs
        memory.wait(turn.subject_id, turn.observation_id, timeout=10)
        memory.facts("user-42")                    # as_of=, believed_at=, history=
        memory.search("user-42", "where do they work?", k=3)
        memory.erase("user-42", attribute="employer", timeout=60)   # forget(), restore() too
        for event in memory.subscribe("supersessions", group="my-agent"): ...

:class:`AsyncClient` is the same with ``await``. Errors: :mod:`slotwise.client.exceptions`.
"""

from __future__ import annotations

from slotwise.client.aio import AsyncClient
from slotwise.client.exceptions import (
    AccessDenied,
    ClientError,
    InvalidRequest,
    PublishFailed,
    Unavailable,
    UnreadableRecord,
    WaitTimeout,
)
from slotwise.client.publishing import Published
from slotwise.client.subscription import AsyncSubscription, Subscription, Tombstone
from slotwise.client.sync import Client
from slotwise.streams.config import Settings
from slotwise.streams.read.reads import SearchHit
from slotwise.topics.records import (
    CandidateFact,
    Command,
    ErasureAttestation,
    Fact,
    Observation,
    ReviewItem,
    SupersessionEvent,
)

__all__ = [
    "AccessDenied",
    "AsyncClient",
    "AsyncSubscription",
    "CandidateFact",
    "Client",
    "ClientError",
    "Command",
    "ErasureAttestation",
    "Fact",
    "InvalidRequest",
    "Observation",
    "PublishFailed",
    "Published",
    "ReviewItem",
    "SearchHit",
    "Settings",
    "Subscription",
    "SupersessionEvent",
    "Tombstone",
    "Unavailable",
    "UnreadableRecord",
    "WaitTimeout",
]
