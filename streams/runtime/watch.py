"""What the worker reports about itself while it runs: lag, stuck events, the broker.

* :class:`LagGauge` — per owned partition, the high watermark minus the
  committed offset (``slotwise_committed_lag``); it reads the consumer, so it
  runs on the poll thread;
* :class:`StuckEvents` — how long each partition's lowest unfinished event has
  held its commits (``slotwise_oldest_unfinished_seconds``), logged once past a
  minute: key-ordered processing lets the partition's other subjects run on, so
  a stuck event shows only as commits that stop, and this names it;
* :func:`watch_broker` — a metadata probe every few seconds, on /healthz: an idle
  worker commits nothing, and a busy one can wait a minute in a transaction
  call, so neither would notice soon that the broker is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping

from confluent_kafka import KafkaException, TopicPartition

from slotwise.streams.runtime import metrics
from slotwise.streams.runtime.health import Health
from slotwise.streams.runtime.offsets import PartitionLedger
from slotwise.streams.runtime.ports import WorkerConsumer

__all__ = ["LagGauge", "StuckEvents", "watch_broker"]

log = logging.getLogger(__name__)

TP = tuple[str, int]


class LagGauge:
    def __init__(self, every_s: float = 1.0) -> None:
        self._every_s = every_s
        self._exported_at = 0.0

    def export(self, consumer: WorkerConsumer, committed: Mapping[TP, int]) -> None:
        """On the poll thread: at most once per interval, from the cached watermarks."""
        now = time.monotonic()
        if now - self._exported_at < self._every_s:
            return
        self._exported_at = now
        for (topic, partition), offset in dict(committed).items():
            _, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), cached=True)
            if high >= 0:
                metrics.LAG.labels(topic, str(partition)).set(max(0, high - offset))


class StuckEvents:
    def __init__(self, after_s: float = 60.0) -> None:
        self._after_s = after_s
        # Per partition: the lowest unfinished offset, since when, and whether it was reported.
        self._oldest: dict[TP, tuple[int, float, bool]] = {}

    def report(self, ledgers: Mapping[TP, PartitionLedger]) -> None:
        now = time.monotonic()
        for tp, ledger in ledgers.items():
            offset = ledger.lowest_unfinished
            labels = (tp[0], str(tp[1]))
            if offset is None:
                self._oldest.pop(tp, None)
                metrics.OLDEST_UNFINISHED.labels(*labels).set(0)
                continue
            seen = self._oldest.get(tp)
            if seen is None or seen[0] != offset:
                seen = self._oldest[tp] = (offset, now, False)
            age = now - seen[1]
            metrics.OLDEST_UNFINISHED.labels(*labels).set(age)
            if age >= self._after_s and not seen[2]:
                self._oldest[tp] = (offset, seen[1], True)
                log.warning(
                    "%s[%d]@%d has been running for %.0f s; %d later events wait to commit",
                    tp[0],
                    tp[1],
                    offset,
                    age,
                    ledger.held - 1,
                )
        for tp in [tp for tp in self._oldest if tp not in ledgers]:
            del self._oldest[tp]
            with contextlib.suppress(KeyError):
                metrics.OLDEST_UNFINISHED.remove(tp[0], str(tp[1]))


async def watch_broker(
    probe: Callable[[str, float], object],
    topic: str,
    health: Health,
    stop: asyncio.Event,
    every_s: float = 5.0,
) -> None:
    """Ask for ``topic``'s metadata every ``every_s`` and report the answer as ``kafka-broker``.

    ``probe`` goes through the producer: a consumer call would wait out a rebalance callback.
    """
    while not stop.is_set():
        try:
            await asyncio.to_thread(probe, topic, every_s)
            health.ok("kafka-broker")
        except KafkaException as exc:
            health.failing("kafka-broker", exc)
        await asyncio.sleep(every_s)
