"""What the background-job tests share: the CLI as a process, a rule-scripted model, reads.

The model is the fake Messages API, answering by rules over the prompt's text
(thread-safe, so the worker and a pass can ask it at once): a rule names the
words the candidate (or the memory asked about) holds and the words of the
listed neighbour to pick, so a test plants a contradiction the model "knows".
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from slotwise.loadtest.fake_anthropic import FakeAnthropic, Reply, ToolUse, default_responder
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.store import RedisStore
from slotwise.topics.codec import decode_record
from slotwise.topics.records import CandidateFact, Fact, ReviewItem, SupersessionEvent
from tests.e2e.harness import Pipeline, store_call

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
_CANDIDATE = re.compile(r'Candidate observation about the user:\n  "(?P<text>.*?)"', re.DOTALL)
_MEMORY = re.compile(r'(?:Memory about the user|Derived memory):\n  "(?P<text>.*?)"', re.DOTALL)
_LISTED = re.compile(r"^  (?P<number>\d+)\. (?P<text>.*)$", re.MULTILINE)


@dataclass
class Rules:
    """The fake model's answers, by what the prompt says.

    ``slot``: (words of the candidate, words of the neighbour it fills the slot of);
    ``fills``: words of a memory → the ``fill_attribute`` answer; ``rederive``: words
    of a derived memory → the ``revalidate`` answer (default keep). ``hold`` makes
    a slot question whose candidate holds the words wait until it is set.
    """

    slot: list[tuple[str, str]] = field(default_factory=list)
    fills: dict[str, dict[str, Any]] = field(default_factory=dict)
    rederive: dict[str, dict[str, Any]] = field(default_factory=dict)
    hold: dict[str, threading.Event] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    holding: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: dict[str, Any]) -> Reply:
        forced = (request.get("tool_choice") or {}).get("name")
        text = "\n".join(
            str(m.get("content")) for m in request.get("messages", []) if m.get("role") == "user"
        )
        with self._lock:
            self.asked.append(f"{forced}: {text}")
        if forced == "answer_slot":
            return self._slot(text)
        if forced in ("fill_attribute", "revalidate"):
            found = _MEMORY.search(text)
            memory = found["text"] if found else ""
            table = self.fills if forced == "fill_attribute" else self.rederive
            default = {"verdict": "no"} if forced == "fill_attribute" else {"verdict": "keep"}
            return ToolUse(next((a for w, a in table.items() if w in memory), default))
        return default_responder(request)

    def _slot(self, question: str) -> Reply:
        found = _CANDIDATE.search(question)
        candidate = found["text"] if found else ""
        for words, event in list(self.hold.items()):
            if words in candidate:
                self.holding.set()
                event.wait(120)
        for said, neighbour in self.slot:
            if said in candidate:
                for listed in _LISTED.finditer(question):
                    if neighbour in listed["text"]:
                        return ToolUse({"memory": int(listed["number"])})
        return ToolUse({"memory": "NONE"})

    def questions(self, tool: str, words: str) -> int:
        with self._lock:
            return sum(1 for a in self.asked if a.startswith(f"{tool}:") and words in a)


def with_model(pipeline: Pipeline, model: FakeAnthropic, timeout_s: float = 30.0) -> None:
    pipeline.extra_env.update(
        {
            "SLOTWISE_ANTHROPIC_API_KEY": "test-key",
            "SLOTWISE_ANTHROPIC_BASE_URL": model.base_url,
            "SLOTWISE_LLM_TIMEOUT_S": str(timeout_s),
        }
    )


def cli(
    pipeline: Pipeline, *args: str, timeout: float = 180.0, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """``slotwise ARGS`` against the pipeline's deployment, as a user would run it."""
    result = subprocess.run(
        [sys.executable, "-m", "slotwise.streams", *args],
        env={**os.environ, **pipeline.env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"slotwise {' '.join(args)} exited {result.returncode}:\n"
                             f"{result.stdout}\n{result.stderr}")  # fmt: skip
    return result


def popen(pipeline: Pipeline, log: Path, *args: str) -> subprocess.Popen[bytes]:
    """``slotwise ARGS`` in the background, its output in ``log`` (for kill -9)."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "slotwise.streams", *args],
            env={**os.environ, **pipeline.env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def candidate(subject: str, text: str, day: float = 1, **fields: Any) -> CandidateFact:
    body: dict[str, Any] = {"category": "misc", **fields}
    return CandidateFact(
        candidate_id=str(uuid.uuid4()),
        subject_id=subject,
        text=text,
        observed_at=T0 + timedelta(days=day),
        **body,
    )


def apply(pipeline: Pipeline, records: Sequence[CandidateFact], timeout: float = 120.0) -> None:
    """Publish and wait until applied; one millisecond apart, so that each fact's
    ``recorded_at`` (the log's clock) orders it as the log did."""
    base = int(time.time() * 1000)
    ends = pipeline.publish(pipeline.catalogue.candidates, records, base_timestamp_ms=base)
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout)


def settle(pipeline: Pipeline, timeout: float = 120.0) -> None:
    """Until every record on the candidates topic so far is committed (commands too)."""
    ends = end_offsets(pipeline)
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout)


def end_offsets(pipeline: Pipeline) -> dict[int, int]:
    consumer = Consumer(pipeline.settings.librdkafka({"group.id": f"o-{uuid.uuid4().hex}"}))
    try:
        topic = pipeline.catalogue.candidates
        ends = {}
        for p in range(pipeline.catalogue.partitions):
            _, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            if high > 0:
                ends[p] = high
        return ends
    finally:
        consumer.close()


def facts(pipeline: Pipeline, subject: str) -> list[Fact]:
    found = store_call(pipeline, "facts", subject, include_history=True)
    assert isinstance(found, list)
    return found


def by_text(pipeline: Pipeline, subject: str) -> dict[str, Fact]:
    return {f.text: f for f in facts(pipeline, subject)}


def events(pipeline: Pipeline, subject: str | None = None) -> list[SupersessionEvent]:
    found = []
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.supersessions):
        if subject is None or key == subject.encode():
            event = decode_record(value, expect=(SupersessionEvent,))
            assert isinstance(event, SupersessionEvent)
            found.append(event)
    return found


def review_records(pipeline: Pipeline, subject: str) -> list[ReviewItem]:
    found = []
    for key, value, _ in pipeline.read_committed(pipeline.catalogue.review):
        if key == subject.encode():
            item = decode_record(value, expect=(ReviewItem,))
            assert isinstance(item, ReviewItem)
            found.append(item)
    return found


def reviews_call(pipeline: Pipeline, method: str, *args: object) -> Any:
    """Call one RedisReviews coroutine against the pipeline's Redis prefix."""

    async def call() -> Any:
        store = RedisStore.from_url(pipeline.settings.redis_url, prefix=pipeline.redis_prefix)
        try:
            return await getattr(RedisReviews(store, prefix=pipeline.redis_prefix), method)(*args)
        finally:
            await store.close()

    return asyncio.run(call())


def open_items(pipeline: Pipeline, subject: str) -> list[ReviewItem]:
    found = reviews_call(pipeline, "open_items", subject)
    assert isinstance(found, list)
    return found


def wait_for(predicate: Callable[[], bool], timeout: float = 120.0, what: str = "it") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout}s")
        time.sleep(0.25)
