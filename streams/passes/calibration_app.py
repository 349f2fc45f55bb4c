"""The calibration stream job: every fact's lifetime, aggregated per category, online.

A faust-streaming app — the stream aggregation faust is built for, and its
role in slotwise (the write path's loop is not faust's, see the README). It
consumes the supersessions topic (``read_committed``: the worker publishes in
transactions) and, per event, looks the superseded fact up in Redis for its
``valid_from`` and its attribute's vocabulary category; the fact lived from
``valid_from`` to the event's ``valid_from``. It adds that lifetime to a
:class:`faust.Table` backed by its compacted changelog topic
(``<prefix>-calibrate-halflife-lifetimes-changelog``), so the totals survive
restarts and are read by ``slotwise calibrate`` without a scan of the store.

*One writer per table entry.* faust writes a table change to the changelog
partition of the event being processed. The table is keyed by category *and
source partition* (``work/3``), so each entry is written from one partition
only and is recovered whole; ``slotwise calibrate`` sums a category's entries.
Each entry also keeps the last source offset it counted, so an event that faust
redelivers after a crash (its commits are at-least-once) is not counted twice.

*No fetch before the flow; the table owns the source positions.* Two faust
behaviours around a restart lose events the offset guard cannot bring back:

- After the table's recovery faust resumes the stream partitions, seeks them to
  their committed offsets, and only then resumes the flow, which clears the
  stream queues. Its fetcher, already running for the recovery, delivers events
  in between; those still queued at the clear are dropped while faust's read
  position has passed them, and its commits then pass them too. So the app's
  consumer holds the stream partitions until faust resumes the flow.
- Its fetcher hands the consumer thread faust's own set of active partitions,
  which the thread reads while it waits (up to a second) for records. The hold
  empties that set (the changelog read to its end is paused, the stream
  partitions are not resumed yet), and aiokafka takes an empty set for every
  partition: records that arrive after the seek to the committed offsets are
  taken for the held partitions and dropped by faust (not active), and the
  partitions resume past them with nothing more counted and nothing logged. So
  the app's consumer hands the thread a copy of the set as it is at the call.
- faust commits a source offset after a flush of its producer buffer that
  returns when no message has gone out for 0.1 s and does not wait for one
  already taken from the buffer: under load, the table changes of the last
  events counted can still be unsent when their offsets are committed, and a
  kill -9 loses them while the commit stands. So when faust seeks to the
  committed offsets, the app seeks each source partition back to the offset
  after the last event the table counted from it, when that is earlier: those
  events are read again and counted once, the offset guard skipping any the
  table holds. Events skipped outright (an erased fact, an attribute not
  single-valued) move no entry; they are read again and skipped again.

Every ``calibrate_refresh_s`` the app fits the half-lives (the censored part
from a scan of the store's still-true facts) and exports
``slotwise_halflife_proposed_days``, ``slotwise_halflife_drift`` (proposed ÷
current) and ``slotwise_halflife_events`` per category on
``SLOTWISE_FORGET_CALIBRATE_METRICS_PORT``.

Run: ``python -m slotwise.streams.passes.calibration_app`` (faust's ``worker`` command).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import sys
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

import faust
from faust.auth import SASLCredentials, SSLCredentials
from faust.transport.consumer import RecordMap
from faust.transport.drivers import aiokafka as faust_aiokafka
from faust.types import TP
from prometheus_client import Gauge, start_http_server

from slotwise.processors.calibration import current_half_lives
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.kafka.admin import broker_replication_factor
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.config import ForgetSettings, Settings
from slotwise.streams.passes.calibration_read import (
    TABLE,
    app_id,
    changelog_lifetimes,
    entry_key,
    fits_of,
    store_lifetimes,
)
from slotwise.streams.read.store import open_store
from slotwise.topics.codec import decode_record
from slotwise.topics.exceptions import RecordError, SlotwiseError
from slotwise.topics.records import SupersessionEvent

__all__ = ["DRIFT", "PROPOSED", "build_app", "main"]

log = logging.getLogger(__name__)

PROPOSED = Gauge(
    "slotwise_halflife_proposed_days", "Half-life fitted from observed lifetimes", ["category"]
)
DRIFT = Gauge(
    "slotwise_halflife_drift", "Fitted half-life divided by the vocabulary's", ["category"]
)
EVENTS = Gauge("slotwise_halflife_events", "Closed lifetimes counted", ["category"])
_DAY_S = 86_400.0


class _ReadCommittedThread(faust_aiokafka.AIOKafkaConsumerThread):
    """faust's consumer reads ``read_uncommitted`` unless the app itself runs exactly-once
    (whose open issues the README lists); the supersessions are published in
    transactions, and an aborted one must not count. aiokafka reads this at start()."""

    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)
        consumer._isolation_level = "read_committed"
        return consumer


class _Consumer(faust_aiokafka.Consumer):
    """faust's consumer, reading ``read_committed``, with the stream partitions resumed
    only once the flow is (see the module docstring) and their positions the table's."""

    _held: set[TP]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._held = set()

    def _new_consumer_thread(self) -> faust_aiokafka.AIOKafkaConsumerThread:
        return _ReadCommittedThread(self, loop=self.loop, beacon=self.beacon)

    async def _getmany(self, active_partitions: set[TP] | None, timeout: float) -> RecordMap:
        # faust hands the consumer thread its own set of active partitions, which the
        # hold and the pauses change while the thread waits for records; emptied, it
        # makes aiokafka read every partition, the held ones too (module docstring).
        asked = None if active_partitions is None else set(active_partitions)
        return await super()._getmany(asked, timeout)

    def resume_partitions(self, tps: Iterable[TP]) -> None:
        # faust resumes the stream partitions before its seek, and clears the stream
        # queues when it resumes the flow after: what is fetched between is lost.
        changelogs = self.app.tables.changelog_topics
        wanted = set(tps)
        streams = {tp for tp in wanted if tp.topic not in changelogs}
        self._held |= streams
        super().resume_partitions(wanted - streams)

    def resume_flow(self) -> None:
        super().resume_flow()
        held, self._held = self._held, set()
        if held:
            # A stall after "Worker ready" logs nothing else: this says which partitions
            # the app let go, and when.
            log.info("resuming the held partitions %s", _tps(held))
        super().resume_partitions(held)

    def pause_partitions(self, tps: Iterable[TP]) -> None:
        tpset = set(tps)
        self._held -= tpset  # a rebalance: they are resumed again after its recovery
        super().pause_partitions(tpset)

    async def seek_to_committed(self) -> Mapping[TP, int]:
        """faust's seek before the flow resumes (after a rebalance's table recovery, or on
        a fetch while the flow is stopped): a source partition whose committed offset is
        past the table's position goes back to that position: a commit can outrun the
        table changes of the events it covers (see the module docstring)."""
        committed = dict(await super().seek_to_committed())
        position = cast(_App, self.app).source_position
        back: dict[TP, int] = {}
        for tp, offset in committed.items():
            resume = position(tp)
            if resume is not None and offset is not None and resume < offset:
                log.info("%s: committed %d, the table resumes at %d", tp, offset, resume)
                back[tp] = resume
        if back:
            await self.seek_wait(back)  # in the consumer's thread, as faust's own seek
        # faust's read and commit marks follow the returned offsets
        return {**committed, **back}


def _tps(tps: Iterable[TP]) -> str:
    """``topic[0, 2]`` per topic, for a log line."""
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ", ".join(f"{topic}{sorted(parts)}" for topic, parts in sorted(by_topic.items()))


class _Transport(faust_aiokafka.Transport):
    Consumer = _Consumer


class _App(faust.App):
    #: The source offset to resume a partition at, as the table knows it (None: no
    #: opinion, faust's committed offset stands); set by :func:`build_app`.
    source_position: Callable[[TP], int | None]

    def _new_transport(self) -> Any:
        return _Transport(self.conf.broker_consumer, self)


def broker_credentials(settings: Settings) -> SASLCredentials | SSLCredentials | None:
    """The librdkafka security settings of ``settings``, as faust's aiokafka driver takes them."""
    config = settings.librdkafka()
    protocol = str(config.get("security.protocol", "PLAINTEXT")).upper()
    if protocol == "PLAINTEXT":
        return None
    context = ssl.create_default_context(cafile=config.get("ssl.ca.location"))
    if protocol == "SSL":
        return SSLCredentials(context)
    return SASLCredentials(
        username=config.get("sasl.username"),
        password=config.get("sasl.password"),
        mechanism=config.get("sasl.mechanism", "PLAIN"),
        ssl_context=context if protocol == "SASL_SSL" else None,
    )


def build_app(
    settings: Settings,
    knobs: ForgetSettings | None = None,
    schema: AttributeSchema | None = None,
) -> faust.App:
    knobs = knobs or ForgetSettings()
    vocabulary = schema or AttributeSchema.load()
    datadir = settings.data_dir / "calibrate" / app_id(settings)
    datadir.mkdir(parents=True, exist_ok=True)
    app = _App(
        app_id(settings),
        broker=f"kafka://{settings.kafka_bootstrap}",
        broker_credentials=broker_credentials(settings),
        store="memory://",
        topic_partitions=settings.partitions,
        topic_replication_factor=settings.replication_factor
        or broker_replication_factor(settings.librdkafka()),
        datadir=str(datadir),
        web_enabled=False,
        consumer_auto_offset_reset="earliest",
        broker_commit_interval=1.0,
    )
    source = app.topic(
        settings.catalogue().supersessions, key_serializer="raw", value_serializer="raw"
    )
    table = app.Table(TABLE, default=None, partitions=settings.partitions, key_type=str)

    def source_position(tp: TP) -> int | None:
        """The offset after the last event counted from a source partition, in any category."""
        if tp.topic != source.get_topic_name():
            return None
        counted = [
            entry["offset"]
            for key, entry in table.items()
            if entry and key.rpartition("/")[2] == str(tp.partition)
        ]
        return max(counted) + 1 if counted else None

    app.source_position = source_position
    holder: list[RedisStore] = []

    def store() -> RedisStore:
        if not holder:
            holder.append(open_store(settings))
        return holder[0]

    @app.agent(source)
    async def lifetimes(stream: Any) -> None:
        async for event in stream.events():
            found = await _lifetime(event.value, store(), vocabulary)
            if found is None:
                continue
            category, days = found
            key = entry_key(category, event.message.partition)
            entry = table.get(key) or {"closed": 0, "days": 0.0, "offset": -1}
            if event.message.offset <= entry["offset"]:
                continue  # counted before a crash; faust redelivers from its last commit
            table[key] = {
                "closed": entry["closed"] + 1,
                "days": entry["days"] + days,
                "offset": event.message.offset,
            }

    @app.timer(knobs.calibrate_refresh_s)  # type: ignore[untyped-decorator]
    async def refresh() -> None:
        try:
            await asyncio.to_thread(_export_fits, settings, vocabulary, knobs.calibrate_confidence)
        except SlotwiseError as exc:
            log.warning("fitting the half-lives failed: %s", exc)

    @app.task  # type: ignore[untyped-decorator]
    async def metrics() -> None:
        start_http_server(knobs.calibrate_metrics_port, addr=settings.metrics_host)

    return app


async def _lifetime(
    value: bytes | None, store: RedisStore, schema: AttributeSchema
) -> tuple[str, float] | None:
    """``(category, days lived)`` of the fact an event superseded, or None to skip it."""
    try:
        event = decode_record(value, expect=(SupersessionEvent,))
    except RecordError:
        return None
    if not isinstance(event, SupersessionEvent):
        return None
    old = await store.get_facts(event.subject_id, [event.old_fact_id])
    if not old:
        return None  # erased since
    spec = schema.get(old[0].attribute)
    if spec is None or not spec.single_valued:
        return None
    days = max(0.0, (event.valid_from - old[0].valid_from).total_seconds() / _DAY_S)
    return spec.category, days


def _export_fits(settings: Settings, schema: AttributeSchema, confidence: float) -> None:
    now = datetime.now(UTC)
    fits = fits_of(
        changelog_lifetimes(settings),
        store_lifetimes(settings, schema, as_of=now, closed=False),
        current_half_lives(schema),
        confidence=confidence,
    )
    for result in fits:
        EVENTS.labels(result.category).set(result.lifetimes.closed)
        if result.half_life_days is not None:
            PROPOSED.labels(result.category).set(result.half_life_days)
        if result.drift is not None:
            DRIFT.labels(result.category).set(result.drift)


def main() -> None:
    """Run the app under faust's ``worker`` command; arguments after ours are faust's."""
    app = build_app(Settings())
    sys.argv = [sys.argv[0], "worker", "-l", "info", "--without-web", *sys.argv[1:]]
    app.main()


if __name__ == "__main__":
    main()
