"""``slotwise serve``'s app on a real uvicorn server in a thread, against one deployment."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import uvicorn

from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.api.serve import ReviewDecider, create_app
from slotwise.streams.config import Settings
from slotwise.streams.dev.testing import free_port
from slotwise.topics.records import Fact


class ServerThread:
    """A uvicorn server on a free loopback port, in a daemon thread; ``stop()`` it."""

    def __init__(
        self,
        settings: Settings,
        *,
        token: str | None = None,
        max_wait_s: float = 30.0,
        review: ReviewDecider | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        app = create_app(settings, token=token, max_wait_s=max_wait_s, review=review)
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="api", daemon=True)

    def start(self, timeout_s: float = 30.0) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the API server did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(15)


def deployment(stack: Settings) -> Settings:
    """The stack's settings under fresh names (topics, Redis prefix, Milvus collections)."""
    run = uuid.uuid4().hex[:8]
    return stack.model_copy(
        update={
            "topic_prefix": f"t{run}",
            "partitions": 3,
            "redis_prefix": f"t{run}",
            "milvus_collection_prefix": f"t{run}",
            "milvus_alias": f"t{run}_current",
        }
    )


def fact(subject: str, fact_id: str, value: str, **fields: object) -> Fact:
    at = datetime(2026, 3, 1, tzinfo=UTC)
    base: dict[str, Any] = {
        "schema": "fact/1",
        "fact_id": fact_id,
        "subject_id": subject,
        "attribute": "employer",
        "value": value,
        "text": f"User works at {value}.",
        "category": "job",
        "status": "current",
        "valid_from": at,
        "observed_at": at,
        "recorded_at": at,
        "source": "chat",
        "confidence": 0.9,
        "importance": 0.5,
        "candidate_id": f"c-{fact_id}",
    }
    return Fact.model_validate({**base, **fields})


@dataclass
class Seeded:
    """Facts written straight to a deployment's Redis, one apply per subject."""

    settings: Settings
    facts: dict[str, list[Fact]] = field(default_factory=dict)

    def write(self, facts: Sequence[Fact]) -> None:
        async def run() -> None:
            store = RedisStore.from_url(self.settings.redis_url, prefix=self.settings.redis_prefix)
            try:
                subject = facts[0].subject_id
                await store.apply(
                    subject,
                    f"seed-{uuid.uuid4().hex}",
                    expected_version=await store.version(subject),
                    facts=facts,
                    outputs=b"{}",
                    observation_id=f"obs-{subject}",
                    now=datetime.now(UTC),
                )
            finally:
                await store.close()

        asyncio.run(run())
        self.facts.setdefault(facts[0].subject_id, []).extend(facts)
