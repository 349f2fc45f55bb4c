"""Every LoCoMo turn through a real worker on the local stack, and every fact it wrote.

    SLOTWISE_LLM=offline python -m slotwise.loadtest.locomo_worker --out replay.jsonl

The turns (:mod:`loadtest.locomo`, read where the corpus lies, never copied into
the repository) are published as observations, each speaker of each conversation
one subject, in conversation order, into a namespace of its own (topics, Redis
prefix, Milvus collections, consumer group) on the configured stack, where one
worker process runs with the same settings. Once every subject's last turn is
applied (read-your-writes), each subject's facts, history included, are read
back from Redis and written one JSON line each: the speaker, the fact's text,
its attribute and value when slotted, ``valid_from``, its status, and the
LoCoMo dialogue id of the turn it came from. Everything the run created is
deleted afterwards. :mod:`loadtest.locomo_judged` scores such a dump against the
judgements in ``datasets/locomo_judged.jsonl``.

Offline by default (``SLOTWISE_LLM`` unset and no API key): what every team,
CI and the demo see first. Bounded: one replica of the corpus, 5,882 turns.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from slotwise.loadtest.locomo import observations, read_turns
from slotwise.sinks.kafka.admin import ensure_topics
from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.streams.config import Settings
from slotwise.streams.dev.testing import WorkerProcess, drop_deployment
from slotwise.streams.read.store import open_store
from slotwise.topics.codec import dumps, encode_record
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Observation

__all__ = ["ReplayError", "WrittenFact", "main", "replay"]

PARTITIONS = 3
APPLY_TIMEOUT_S = 1800.0  # the whole corpus, on two shared cores


class ReplayError(SlotwiseError, RuntimeError):
    """The worker did not apply the corpus in time."""


@dataclass(frozen=True, slots=True)
class WrittenFact:
    """One fact the worker wrote for a speaker, and the turn it came from."""

    conversation: str
    speaker: str
    dia_id: str
    attribute: str | None
    value: str | None
    text: str
    valid_from: str
    status: str


def replay(base: Settings, path: Path | None = None) -> tuple[int, list[WrittenFact]]:
    """The number of turns published and every fact written, on a fresh deployment."""
    namespace = f"locomo-{uuid.uuid4().hex[:8]}"
    settings = base.in_namespace(namespace).model_copy(update={"partitions": PARTITIONS})
    replayed = list(observations(read_turns(path), 1, prefix=f"{namespace}-"))
    worker = WorkerProcess(
        settings, "locomo", Path(tempfile.mkdtemp(prefix="slotwise-locomo-")) / "worker.log"
    )
    try:
        ensure_topics(settings.librdkafka(), settings.catalogue())
        worker.start()
        worker.wait_healthy()
        _publish(settings, replayed)
        return len(replayed), asyncio.run(_read_back(settings, replayed, worker))
    finally:
        worker.stop()
        drop_deployment(settings)


def _publish(settings: Settings, replayed: Sequence[Observation]) -> None:
    topic = settings.catalogue().observations
    producer = idempotent_producer(settings.librdkafka())
    for observation in replayed:
        producer.produce(topic, encode_record(observation), observation.subject_id.encode())
        producer.poll(0)
    if producer.flush(120):
        raise ReplayError("the turns could not all be published")


async def _read_back(
    settings: Settings, replayed: Sequence[Observation], worker: WorkerProcess
) -> list[WrittenFact]:
    last: dict[str, Observation] = {o.subject_id: o for o in replayed}
    turn_of = {o.observation_id: o for o in replayed}
    store = open_store(settings)
    written: list[WrittenFact] = []
    started = time.monotonic()
    try:
        for subject, observation in sorted(last.items()):
            left = APPLY_TIMEOUT_S - (time.monotonic() - started)
            if not await store.wait_for_observation(subject, observation.observation_id, left):
                worker.check_alive()
                raise ReplayError(f"{subject} not applied in time:\n{worker.log_tail()}")
            for fact in await store.facts(subject, include_history=True):
                source = turn_of.get(fact.observation_id or "")
                if source is None:
                    continue
                conversation = str(source.metadata["conversation"])
                # The subject is "{namespace}-{conversation}-{speaker}-{replica}".
                named = subject.removeprefix(f"{settings.namespace}-{conversation}-")
                written.append(
                    WrittenFact(
                        conversation=conversation,
                        speaker=named.rsplit("-", 1)[0],
                        dia_id=str(source.metadata["dia_id"]),
                        attribute=fact.attribute,
                        value=None if fact.value is None else str(fact.value),
                        text=fact.text,
                        valid_from=fact.valid_from.isoformat(),
                        status=str(fact.status),
                    )
                )
    finally:
        await store.close()
    return sorted(written, key=lambda w: (w.conversation, _turn_order(w.dia_id), w.text))


def _turn_order(dia_id: str) -> tuple[int, int]:
    """``D3:14`` as (3, 14), so a dump reads in conversation order."""
    session, _, turn = dia_id.removeprefix("D").partition(":")
    try:
        return int(session), int(turn)
    except ValueError:
        return 0, 0


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=None, help="locomo10.json (default: shared)")
    parser.add_argument("--out", type=Path, required=True, help="one JSON line per written fact")
    args = parser.parse_args(argv)
    began = time.monotonic()
    turns, written = replay(Settings(), args.path)
    args.out.write_bytes(b"".join(dumps(asdict(w)) + b"\n" for w in written))
    slotted = sum(w.attribute is not None for w in written)
    sources = len({(w.conversation, w.dia_id) for w in written})
    print(
        f"turns {turns}  facts {len(written)} from {sources}"
        f" turns  slotted {slotted}  in {time.monotonic() - began:.0f} s  -> {args.out}"
    )


if __name__ == "__main__":
    main()
