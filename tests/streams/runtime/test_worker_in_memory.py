"""The worker's own logic without a broker: dispatch, redelivery, rebalances, replays.

The worker runs on the in-memory broker of ``streams/runtime/testing.py``, made
through the same ``WorkerClients`` the wiring makes Kafka's with, and a write
path that records what it was given (or the real one over the in-memory stores
of ``processors/testing.py``, for a crash-equivalence check); each test takes
milliseconds. What only a broker proves (librdkafka's threads, transactions,
fencing) stays in ``test_worker_rebalance.py`` and the end-to-end tests.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from slotwise.processors.cascade import Cascade
from slotwise.processors.extract import RulesExtractor
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import InMemoryState, InMemoryVectors, ScriptedMatcher
from slotwise.streams.runtime import metrics
from slotwise.streams.runtime.failures import classify
from slotwise.streams.runtime.health import Health
from slotwise.streams.runtime.recovery import StoreMarks, StoreServer, SubjectHeal
from slotwise.streams.runtime.testing import InMemoryMarks, InMemoryTopics, TestingConsumer
from slotwise.streams.runtime.worker import RecordProcessor, Worker, WorkerConfig
from slotwise.streams.write.path import WritePath
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import encode_record
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import CandidateFact, Command, Observation

CATALOGUE = Catalogue(prefix="mem", partitions=2)
CANDIDATES = CATALOGUE.candidates
AT = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class RecordingPath:
    """A write path that notes each candidate it applies and publishes its id; a
    candidate in ``held`` waits until the test lets it go."""

    seen: list[tuple[str, str]] = field(default_factory=list)
    held: dict[str, asyncio.Event] = field(default_factory=dict)
    on_apply: Callable[[CandidateFact], None] = lambda _: None

    async def on_candidate(self, candidate: CandidateFact) -> tuple[Outbound, ...]:
        self.seen.append((candidate.subject_id, candidate.candidate_id))
        self.on_apply(candidate)
        gate = self.held.get(candidate.candidate_id)
        if gate is not None:
            await gate.wait()
        value = candidate.candidate_id.encode()
        return (Outbound(topic="supersessions", key=candidate.subject_id.encode(), value=value),)

    async def on_observation(self, observation: Observation) -> tuple[Outbound, ...]:
        return ()

    async def on_command(self, command: Command) -> tuple[Outbound, ...]:
        return ()

    def order(self, subject: str) -> list[str]:
        return [c for s, c in self.seen if s == subject]


def candidate(subject: str, n: int) -> CandidateFact:
    return CandidateFact(
        candidate_id=f"{subject}-{n:03d}", subject_id=subject, text=f"fact {n}", observed_at=AT
    )


def publish(broker: InMemoryTopics, subjects: Iterable[str], each: int) -> list[CandidateFact]:
    published = [candidate(s, n) for n in range(each) for s in subjects]
    for c in published:
        broker.produce(CANDIDATES, encode_record(c), key=c.subject_id.encode())
    return published


@dataclass
class Rig:
    broker: InMemoryTopics
    path: RecordingPath
    worker: Worker

    @property
    def consumer(self) -> TestingConsumer:
        return self.broker.consumers[-1]

    def ledgers(self) -> set[tuple[str, int]]:
        """The partitions the worker's checkpoint holds a ledger of."""
        return set(self.worker._checkpoint.ledgers)

    def published(self) -> Counter[bytes | None]:
        return Counter(m.value() for m in self.broker.messages(CATALOGUE.supersessions))

    def caught_up(self) -> bool:
        ends = self.broker.ends(CANDIDATES)
        return all(self.broker.committed.get((CANDIDATES, p), 0) >= e for p, e in ends.items())


def rig(
    broker: InMemoryTopics | None = None,
    *,
    marks: StoreMarks | None = None,
    server: StoreServer | None = None,
    heal: SubjectHeal | None = None,
    max_in_flight: int = 1000,
    processor: RecordProcessor | None = None,
    rejoin_timeout_s: float = 60.0,
    health: Health | None = None,
) -> Rig:
    broker = broker or InMemoryTopics.of(CATALOGUE)
    clients = broker.clients(CATALOGUE)
    path = RecordingPath()
    worker = Worker(
        WorkerConfig(
            max_in_flight=max_in_flight,
            commit_interval_s=0.005,
            rejoin_timeout_s=rejoin_timeout_s,
        ),
        CATALOGUE,
        processor or path,
        consumer=clients.consumer(None),
        replace_consumer=lambda: clients.consumer(None),
        publisher=clients.publisher("mem-worker"),
        sinks={},
        classify=classify,
        health=health or Health(),
        marks=marks,
        server=server,
        heal=heal,
    )
    return Rig(broker, path, worker)


async def until(done: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.002)


def run(rig: Rig, scenario: Callable[[], object] | None = None, timeout_s: float = 5.0) -> None:
    """Run the worker until it committed every candidate (after ``scenario``), then stop it."""

    async def main() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(rig.worker.run(stop))
        try:
            if scenario is not None:
                step = scenario()
                if asyncio.iscoroutine(step):
                    await step
            await until(rig.caught_up, timeout_s)
        finally:
            stop.set()
            await asyncio.wait_for(task, timeout_s)

    asyncio.run(main())


def counter(metric: object, *labels: str) -> float:
    value: float = metric.labels(*labels)._value.get()  # type: ignore[attr-defined]
    return value


def test_every_candidate_is_applied_once_in_subject_order_and_committed() -> None:
    worker = rig()
    published = publish(worker.broker, ["ana", "bo", "cy", "di", "ed"], each=20)

    run(worker)

    assert sorted(c for _, c in worker.path.seen) == sorted(c.candidate_id for c in published)
    for subject in ("ana", "bo", "cy", "di", "ed"):
        assert worker.path.order(subject) == [f"{subject}-{n:03d}" for n in range(20)]
    assert set(worker.published().values()) == {1}
    assert len(worker.published()) == len(published)
    assert all(thread.startswith("slotwise-poll") for _, thread in worker.consumer.calls)


def test_a_record_that_does_not_decode_is_dead_lettered_and_passed() -> None:
    worker = rig()
    publish(worker.broker, ["ana"], each=2)
    worker.broker.produce(CANDIDATES, b"{not json", key=b"ana")
    publish(worker.broker, ["ana"], each=1)

    run(worker)

    dead = worker.broker.messages(CATALOGUE.deadletter)
    assert len(dead) == 1 and b"not json" in (dead[0].value() or b"")
    assert worker.path.order("ana") == ["ana-000", "ana-001", "ana-000"]


def test_an_offset_delivered_again_is_dropped_and_the_partition_sent_back() -> None:
    worker = rig()
    published = publish(worker.broker, ["ana", "bo"], each=30)
    partition = worker.broker.messages(CANDIDATES)[0].partition()
    before = counter(metrics.REDELIVERED, CANDIDATES, str(partition))

    def deliver_again(applied: CandidateFact) -> None:
        if applied.candidate_id.endswith("-010"):
            worker.consumer.deliver_again((CANDIDATES, partition), 2)

    worker.path.on_apply = deliver_again
    run(worker)

    assert counter(metrics.REDELIVERED, CANDIDATES, str(partition)) > before
    assert Counter(c for _, c in worker.path.seen) == Counter(c.candidate_id for c in published)
    assert set(worker.published().values()) == {1}


def test_a_failed_transaction_is_retried_with_the_same_batch() -> None:
    broker = InMemoryTopics.of(CATALOGUE)
    worker = rig(broker)
    publisher = broker.publishers[-1]
    publisher.fail(3)
    published = publish(broker, ["ana", "bo"], each=10)

    run(worker)

    assert publisher.aborted == 3
    assert len(worker.published()) == len(published)
    assert set(worker.published().values()) == {1}


def test_a_revoked_partition_drops_its_in_flight_events_and_its_new_owner_replays_them() -> None:
    worker = rig()
    publish(worker.broker, ["ana", "bo", "cy", "di"], each=5)
    # One subject of partition 1 stops in the middle of its events.
    subject = next(s for s in ("ana", "bo", "cy", "di") if _partition_of(worker.broker, s) == 1)
    stuck = f"{subject}-002"
    gate = asyncio.Event()
    worker.path.held[stuck] = gate

    async def scenario() -> None:
        await until(lambda: stuck in {c for _, c in worker.path.seen})
        worker.consumer.rebalance(revoke=[(CANDIDATES, 1)])
        await until(lambda: (CANDIDATES, 1) not in worker.ledgers())
        gate.set()  # the cancelled event is gone; nothing of it is committed
        committed = worker.broker.committed.get((CANDIDATES, 1), 0)
        worker.consumer.rebalance(assign=[(CANDIDATES, 1)])
        await until(lambda: worker.broker.committed.get((CANDIDATES, 1), 0) > committed)
        worker.path.held.clear()

    run(worker, scenario)

    # Applied again from the commit by the owner it came back to, published once.
    assert len(worker.path.seen) > 20
    assert len(worker.published()) == 20 and set(worker.published().values()) == {1}
    assert all(thread.startswith("slotwise-poll") for _, thread in worker.consumer.calls)


def test_a_consumer_that_lost_its_partitions_and_never_rejoins_is_replaced() -> None:
    # A static member whose session expired in a broker outage can stay out of the
    # group for good (librdkafka #3437): a new consumer joins and replays the rest.
    health = Health()
    worker = rig(rejoin_timeout_s=0.05, health=health)
    publish(worker.broker, ["ana", "bo", "cy", "di"], each=5)
    stuck = "ana-002"
    gate = asyncio.Event()
    worker.path.held[stuck] = gate
    first = worker.consumer

    async def scenario() -> None:
        await until(lambda: stuck in {c for _, c in worker.path.seen})
        first.rebalance(revoke=[(CANDIDATES, 0), (CANDIDATES, 1)], lost=True)
        await until(lambda: len(worker.broker.consumers) == 2)
        gate.set()

    run(worker, scenario)

    assert first.closed and worker.consumer is not first
    # What the lost consumer left uncommitted was applied again, and published once.
    assert len(worker.path.seen) > 20
    assert len(worker.published()) == 20 and set(worker.published().values()) == {1}
    assert health.report()[0]


def test_a_consumer_assigned_again_after_a_loss_is_kept() -> None:
    worker = rig(rejoin_timeout_s=0.2)
    publish(worker.broker, ["ana", "bo"], each=5)
    first = worker.consumer

    async def scenario() -> None:
        await until(lambda: len(worker.path.seen) > 0)
        first.rebalance(revoke=[(CANDIDATES, 0), (CANDIDATES, 1)], lost=True)
        first.rebalance(assign=[(CANDIDATES, 0), (CANDIDATES, 1)])
        await asyncio.sleep(0.4)

    run(worker, scenario)

    assert worker.broker.consumers == [first]  # no second consumer was made
    assert len(worker.published()) == 10


def _partition_of(broker: InMemoryTopics, subject: str) -> int:
    return next(m.partition() for m in broker.messages(CANDIDATES) if m.key() == subject.encode())


def test_a_partition_paused_when_revoked_is_fetched_when_it_comes_back() -> None:
    # librdkafka keeps a pause across a revocation (the in-memory consumer too): a
    # partition given back to a worker no longer paused must be resumed, or it idles.
    worker = rig(max_in_flight=4)
    publish(worker.broker, ["ana", "bo", "cy", "di"], each=10)
    gates = {f"{s}-000": asyncio.Event() for s in ("ana", "bo", "cy", "di")}
    worker.path.held.update(gates)

    async def scenario() -> None:
        await until(lambda: worker.consumer.paused >= {(CANDIDATES, 0), (CANDIDATES, 1)})
        worker.consumer.rebalance(revoke=[(CANDIDATES, 1)])
        await until(lambda: (CANDIDATES, 1) not in worker.ledgers())
        for gate in gates.values():
            gate.set()
        await until(lambda: (CANDIDATES, 0) not in worker.consumer.paused)
        assert (CANDIDATES, 1) in worker.consumer.paused  # kept over the revocation
        worker.consumer.rebalance(assign=[(CANDIDATES, 1)])

    run(worker, scenario)  # caught up: partition 1 was fetched again

    assert len(worker.published()) == 40 and set(worker.published().values()) == {1}


@dataclass
class Healer:
    healed: list[str] = field(default_factory=list)

    async def __call__(self, subject_id: str) -> None:
        self.healed.append(subject_id)


def test_a_store_behind_the_log_is_replayed_quietly_and_healed_first() -> None:
    broker = InMemoryTopics.of(CATALOGUE)
    published = publish(broker, ["ana", "bo"], each=6)
    ends = broker.ends(CANDIDATES)
    broker.committed.update({(CANDIDATES, p): end for p, end in ends.items()})
    # The store lost the last two events of every partition; the others' outputs are out.
    marks = InMemoryMarks({(CANDIDATES, p): end - 2 for p, end in ends.items() if end})
    heal = Healer()
    worker = rig(broker, marks=marks, heal=heal)
    more = publish(broker, ["ana", "bo"], each=1)

    run(worker)

    replayed = {c.candidate_id for c in published[-4:]}
    assert {c for _, c in worker.path.seen} == replayed | {c.candidate_id for c in more}
    assert sorted(heal.healed) == ["ana", "bo"]
    # Below the committed offset nothing is published again: only the new events.
    assert set(worker.published()) == {c.candidate_id.encode() for c in more}
    assert marks.marks == {(CANDIDATES, p): e for p, e in broker.ends(CANDIDATES).items() if e}


@dataclass
class Server:
    generation: int = 0
    accepted: list[int] = field(default_factory=list)

    def accept(self) -> None:
        self.accepted.append(self.generation)


def test_a_change_of_store_server_replays_every_uncommitted_event_healing_first() -> None:
    server = Server()
    heal = Healer()
    worker = rig(marks=InMemoryMarks(), server=server, heal=heal)
    published = publish(worker.broker, ["ana", "bo"], each=10)
    rewinds = metrics.STORE_REWINDS._value.get()
    gate = asyncio.Event()
    worker.path.held["ana-005"] = gate

    async def scenario() -> None:
        await until(lambda: "ana-005" in {c for _, c in worker.path.seen})
        server.generation = 1  # a failover under the running worker
        await until(lambda: server.accepted[-1:] == [1])
        gate.set()
        worker.path.held.clear()

    run(worker, scenario)

    assert metrics.STORE_REWINDS._value.get() > rewinds
    assert "ana" in heal.healed and heal.healed.count("ana") == 1
    assert Counter(c for _, c in worker.path.seen)["ana-005"] == 2  # decided again
    assert len(worker.published()) == len(published)
    assert set(worker.published().values()) == {1}


def test_taking_partitions_that_fails_stops_the_worker() -> None:
    class BrokenMarks(InMemoryMarks):
        async def read(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
            raise RuntimeError("the store answers garbage")

    worker = rig(marks=BrokenMarks())
    publish(worker.broker, ["ana"], each=1)

    async def main() -> BaseException | None:
        task = asyncio.create_task(worker.worker.run(asyncio.Event()))
        done, _ = await asyncio.wait({task}, timeout=5)
        return task.exception() if done else None

    failure = asyncio.run(main())
    assert failure is not None and "taking partitions failed" in str(failure)


NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)


@dataclass
class Slowed:
    """The write path over the in-memory stores, a moment per candidate, so that events
    are in flight when partitions move; ``seen`` counts the candidates it was given."""

    inner: WritePath
    seen: int = 0

    async def on_candidate(self, candidate: CandidateFact) -> tuple[Outbound, ...]:
        self.seen += 1
        await asyncio.sleep(0.001)
        return await self.inner.on_candidate(candidate)

    async def on_observation(self, observation: Observation) -> tuple[Outbound, ...]:
        return await self.inner.on_observation(observation)

    async def on_command(self, command: Command) -> tuple[Outbound, ...]:
        return await self.inner.on_command(command)


def stored_run(moves: bool) -> tuple[Counter[bytes | None], dict[str, dict[str, Any]], int]:
    """Employers changing for four subjects, through the real write path on the in-memory
    stores; with ``moves``, partition 1 is revoked mid-run and given back."""
    schema = AttributeSchema.load()
    state, vectors = InMemoryState(), InMemoryVectors(lambda texts: [[1.0, 0.0] for _ in texts])
    cascade = Cascade(
        schema, state.facts, vectors, ScriptedMatcher([]), now=lambda: NOW, embedding_model="t"
    )
    path = Slowed(WritePath(RulesExtractor(schema), cascade, state, vectors, lambda: NOW))
    worker = rig(processor=path)
    for day in range(1, 13):
        for subject in ("ana", "bo", "cy", "di"):
            change = CandidateFact(
                candidate_id=f"{subject}-{day:02d}",
                subject_id=subject,
                attribute="employer",
                value=f"Firm {day}",
                text=f"User works at Firm {day}.",
                observed_at=datetime(2026, 3, day, 9, 0, tzinfo=UTC),
            )
            worker.broker.produce(CANDIDATES, encode_record(change), key=subject.encode())

    async def scenario() -> None:
        if not moves:
            return
        await until(lambda: path.seen >= 15)
        worker.consumer.rebalance(revoke=[(CANDIDATES, 1)])
        await until(lambda: (CANDIDATES, 1) not in worker.ledgers())
        await asyncio.sleep(0.01)
        worker.consumer.rebalance(assign=[(CANDIDATES, 1)])

    run(worker, scenario)
    published = Counter(m.value() for m in worker.broker.messages(CATALOGUE.supersessions))
    facts = {fact_id: fact.model_dump() for fact_id, fact in state.facts.facts.items()}
    return published, facts, path.seen


def test_a_partition_moved_mid_run_leaves_what_an_uninterrupted_run_leaves() -> None:
    clean_events, clean_facts, _ = stored_run(moves=False)
    moved_events, moved_facts, applied = stored_run(moves=True)

    assert applied > 4 * 12  # the revoked partition's uncommitted events ran again
    assert len(clean_events) == 4 * 11 and set(clean_events.values()) == {1}
    assert moved_events == clean_events  # each supersession published once, the same
    assert moved_facts == clean_facts
