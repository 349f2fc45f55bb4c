"""The worker's consumer through rebalances, against the real broker.

While a rebalance callback runs on the poll thread it waits for the event
loop, and a consumer call from any other thread blocks until the callback
returns: one such call on the event loop deadlocks the worker, and the
partitions being handed over stay assigned to no one. So the consumer must be
touched by the poll thread alone, whatever the timing; this checks every call.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

import slotwise.streams.wiring.kafka_clients as kafka_clients_module
from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.config import GroupProtocol, Settings
from slotwise.streams.runtime.errors import ConsumerFailed
from slotwise.streams.runtime.failures import classify
from slotwise.streams.runtime.health import Health
from slotwise.streams.runtime.worker import Worker, WorkerConfig
from slotwise.streams.wiring.kafka_clients import worker_consumer, worker_publisher
from slotwise.streams.write.path import WritePath
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import CandidateFact, Command, Observation
from tests.e2e.harness import Pipeline

pytestmark = [pytest.mark.kafka]


def _thread_checked(calls_elsewhere: list[str]) -> type[Consumer]:
    """A Consumer that notes every call made outside the worker's poll thread."""

    def checked(name: str) -> Callable[..., Any]:
        def method(self: Consumer, *args: Any, **kwargs: Any) -> Any:
            thread = threading.current_thread().name
            if not thread.startswith("slotwise-poll"):
                calls_elsewhere.append(f"{name} on {thread}")
            return getattr(super(checked_type, self), name)(*args, **kwargs)

        return method

    public = [name for name in dir(Consumer) if not name.startswith("_")]
    checked_type = type("PollThreadConsumer", (Consumer,), {n: checked(n) for n in public})
    return checked_type


@dataclass
class _SlowWritePath:
    """Takes a few milliseconds per candidate, so events are in flight when partitions move."""

    delay_s: float

    async def on_candidate(self, candidate: CandidateFact) -> tuple[Outbound, ...]:
        await asyncio.sleep(self.delay_s)
        return ()

    async def on_observation(self, observation: Observation) -> tuple[Outbound, ...]:
        return ()

    async def on_command(self, command: Command) -> tuple[Outbound, ...]:
        return ()


def _worker(
    settings: Settings,
    catalogue: Catalogue,
    write_path: _SlowWritePath,
    *,
    transactional_id: str,
    group_instance_id: str,
    **config: Any,
) -> Worker:
    """A worker built as ``streams.app`` builds one, on the catalogue's topics."""
    settings = settings.model_copy(
        update={"topic_prefix": catalogue.prefix, "partitions": catalogue.partitions}
    )
    return Worker(
        WorkerConfig(**config),
        catalogue,
        cast(WritePath, write_path),
        consumer=worker_consumer(settings, group_instance_id),
        publisher=worker_publisher(settings, transactional_id),
        sinks={},
        classify=classify,
        health=Health(),
    )


def _assignment(bootstrap: str, group_id: str) -> dict[str, list[tuple[str, int]]]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    group = admin.describe_consumer_groups([group_id])[group_id].result(10)
    return {
        member.member_id: sorted(
            (tp.topic, tp.partition) for tp in member.assignment.topic_partitions
        )
        for member in group.members
    }


@pytest.mark.parametrize("protocol", ["consumer", "classic"])
def test_consumer_calls_stay_on_the_poll_thread_while_a_second_worker_joins(
    protocol: GroupProtocol,
    catalogue: Catalogue,
    stack: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls_elsewhere: list[str] = []
    monkeypatch.setattr(kafka_clients_module, "Consumer", _thread_checked(calls_elsewhere))
    workload = WorkloadConfig(subjects=40, count=3000, seed=11)
    candidates = [w.candidate() for w in generate(workload, AttributeSchema.load())]
    pipeline = Pipeline(stack, catalogue, tmp_path, group_id=f"{catalogue.prefix}-workers")
    ends = pipeline.publish(catalogue.candidates, candidates)
    group_id = pipeline.group_id

    def committed() -> dict[int, int]:
        return pipeline.committed(catalogue.candidates)

    def start(name: str, stop: asyncio.Event) -> tuple[Worker, asyncio.Task[None]]:
        worker = _worker(
            stack.model_copy(update={"group_id": group_id, "group_protocol": protocol}),
            catalogue,
            _SlowWritePath(delay_s=0.04),  # the first replica is still busy when the second joins
            transactional_id=f"{group_id}-{name}",
            group_instance_id=f"{group_id}-{name}",
            commit_interval_s=0.05,
            max_in_flight=200,  # paused and resumed many times on the way
        )
        return worker, asyncio.create_task(worker.run(stop), name=name)

    async def until(done: Callable[[dict[int, int]], bool], timeout: float) -> dict[int, int]:
        deadline = time.monotonic() + timeout
        while True:
            offsets = await asyncio.to_thread(committed)
            if done(offsets) or time.monotonic() > deadline:
                return offsets
            await asyncio.sleep(0.2)

    async def scenario() -> tuple[dict[int, int], dict[str, list[tuple[str, int]]]]:
        stop = asyncio.Event()
        _, first = start("first", stop)
        await until(lambda offsets: sum(max(0, o) for o in offsets.values()) >= 300, 60)
        _, second = start("second", stop)
        offsets = await until(
            lambda offsets: all(offsets.get(p, -1) >= end for p, end in ends.items()), 120
        )
        assignment = await asyncio.to_thread(_assignment, stack.kafka_bootstrap, group_id)
        stop.set()
        await asyncio.wait_for(asyncio.gather(first, second), 60)
        return offsets, assignment

    offsets, assignment = asyncio.run(scenario())

    assert calls_elsewhere == []
    assert all(offsets.get(p, -1) >= end for p, end in ends.items()), (offsets, ends)
    assert len(assignment) == 2 and all(assignment.values()), assignment
    if protocol == "consumer":
        # Each replica owns the same partition numbers of both topics.
        for owned in assignment.values():
            observations = {p for t, p in owned if t == catalogue.observations}
            candidates = {p for t, p in owned if t == catalogue.candidates}
            assert observations == candidates, assignment


def test_a_worker_whose_consumer_is_fenced_stops_with_an_error(
    catalogue: Catalogue, kafka_bootstrap: str
) -> None:
    # A second replica under the same instance name fences the first one's consumer
    # for good; the first must stop (and be restarted), not idle as a zombie.
    group_id = f"{catalogue.prefix}-workers"

    def worker(transactional_id: str) -> Worker:
        return _worker(
            Settings(kafka_bootstrap=kafka_bootstrap, group_id=group_id, group_protocol="classic"),
            catalogue,
            _SlowWritePath(0.0),
            transactional_id=transactional_id,
            group_instance_id=f"{group_id}-twin",
        )

    async def scenario() -> BaseException | None:
        stop = asyncio.Event()
        first = asyncio.create_task(worker(f"{group_id}-a").run(stop))
        await asyncio.sleep(5)
        second = asyncio.create_task(worker(f"{group_id}-b").run(stop))
        done, _ = await asyncio.wait({first}, timeout=60)
        stop.set()
        await asyncio.wait_for(second, 60)
        return first.exception() if done else None

    assert isinstance(asyncio.run(scenario()), ConsumerFailed)


def test_partitions_revoked_while_paused_are_fetched_when_they_come_back(
    catalogue: Catalogue, stack: Settings, tmp_path: Path
) -> None:
    # librdkafka keeps a partition's pause across its revocation: a worker paused by
    # backpressure when a second replica took partitions, and given them back idle when
    # that one left, owned them and never fetched them again. The classic protocol's
    # cooperative-sticky assignor leaves the first replica one whole topic, so it is idle
    # when the others come back (KIP-848's range assignor keeps it busy, and paused).
    def workload(seed: int) -> list[CandidateFact]:
        config = WorkloadConfig(subjects=40, count=3000, seed=seed)
        return [w.candidate() for w in generate(config, AttributeSchema.load())]

    pipeline = Pipeline(stack, catalogue, tmp_path, group_id=f"{catalogue.prefix}-workers")
    group_id = pipeline.group_id

    def start(name: str, stop: asyncio.Event) -> asyncio.Task[None]:
        worker = _worker(
            stack.model_copy(update={"group_id": group_id, "group_protocol": "classic"}),
            catalogue,
            _SlowWritePath(delay_s=0.1),
            transactional_id=f"{group_id}-{name}",
            group_instance_id=f"{group_id}-{name}",
            commit_interval_s=0.05,
            max_in_flight=40,  # paused nearly all the time while there is a backlog
        )
        return asyncio.create_task(worker.run(stop), name=name)

    async def committed_past(ends: dict[int, int], timeout: float) -> dict[int, int]:
        deadline = time.monotonic() + timeout
        while True:
            offsets = await asyncio.to_thread(pipeline.committed, catalogue.candidates)
            if all(offsets.get(p, -1) >= end for p, end in ends.items()):
                return offsets
            if time.monotonic() > deadline:
                raise AssertionError(f"committed {offsets}, published up to {ends}")
            await asyncio.sleep(0.2)

    async def scenario() -> None:
        stop_first, stop_second = asyncio.Event(), asyncio.Event()
        ends = pipeline.publish(catalogue.candidates, workload(12))
        first = start("first", stop_first)
        await asyncio.sleep(2)  # paused under its backlog when the second one joins
        second = start("second", stop_second)
        await committed_past(ends, 90)
        stop_second.set()  # its partitions go back to the first replica, now idle
        await asyncio.wait_for(second, 60)
        ends = pipeline.publish(catalogue.candidates, workload(13))
        try:
            await committed_past(ends, 60)
        finally:
            stop_first.set()
            await asyncio.wait_for(first, 60)

    asyncio.run(scenario())
