"""The calibration app's hold on the stream partitions and its seek to the table's positions.

Without a broker. The stream partitions faust resumes before its seek stay
paused until it resumes the flow (which clears the stream queues). faust's
committed offset can be past the events the recovered table counted (a commit
that outran the table changes of its last events before a kill -9); the app's
seek to the committed offsets then goes back to the table's position for that
source partition, and leaves alone a partition the table has no opinion on or
has counted past. A fetch under way when the hold empties faust's set of active
partitions reads the partitions it was asked for, not every one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from unittest.mock import AsyncMock

import pytest
from faust.transport.drivers import aiokafka as faust_aiokafka
from faust.types import TP

from slotwise.streams.config import Settings
from slotwise.streams.passes.calibration_app import build_app
from slotwise.streams.passes.calibration_read import TABLE, entry_key


def _app(tmp_path: Path) -> tuple[Any, str]:
    settings = Settings(data_dir=tmp_path, partitions=3)
    app = build_app(settings)
    table = app.tables[TABLE]
    # the table as recovered from its changelog: what each (category, partition) counted last
    table.data[entry_key("work", 0)] = {"closed": 95, "days": 1.0, "offset": 264}
    table.data[entry_key("home", 0)] = {"closed": 40, "days": 1.0, "offset": 260}
    table.data[entry_key("work", 1)] = {"closed": 7, "days": 1.0, "offset": 30}
    return app, settings.catalogue().supersessions


def test_source_position_is_after_the_last_event_counted_in_any_category(tmp_path: Path) -> None:
    app, source = _app(tmp_path)
    assert app.source_position(TP(source, 0)) == 265
    assert app.source_position(TP(source, 1)) == 31
    assert app.source_position(TP(source, 2)) is None
    assert app.source_position(TP("another-topic", 0)) is None


def test_the_seek_to_committed_goes_back_to_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, source = _app(tmp_path)
    committed = {TP(source, 0): 267, TP(source, 1): 31, TP(source, 2): 12, TP("other", 0): 5}
    monkeypatch.setattr(
        faust_aiokafka.Consumer, "seek_to_committed", AsyncMock(return_value=committed)
    )
    consumer = app.consumer
    seek_wait = AsyncMock()
    monkeypatch.setattr(consumer, "seek_wait", seek_wait)

    positions = asyncio.run(consumer.seek_to_committed())

    seek_wait.assert_awaited_once_with({TP(source, 0): 265})
    assert positions == {**committed, TP(source, 0): 265}


def test_the_stream_partitions_wait_for_the_flow(tmp_path: Path) -> None:
    app, source = _app(tmp_path)
    consumer = app.consumer
    changelog = TP(app.tables[TABLE].changelog_topic.get_topic_name(), 0)
    streams = {TP(source, 0), TP(source, 1)}

    consumer.resume_partitions({changelog, *streams})
    assert consumer._get_active_partitions() == {changelog}
    consumer.resume_flow()
    assert consumer._get_active_partitions() == {changelog, *streams}

    consumer.pause_partitions({changelog, *streams})
    consumer.resume_partitions(streams)
    consumer.pause_partitions({TP(source, 0)})  # a rebalance before the flow resumed
    consumer.resume_flow()
    assert consumer._get_active_partitions() == {TP(source, 1)}


def test_a_fetch_under_way_reads_the_partitions_it_was_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The consumer thread waits up to the fetch timeout for records while the app moves on:
    the changelog read to its end is paused and the stream partitions are held, which empties
    faust's set of active partitions. aiokafka reads an empty set as every partition: had the
    thread been handed faust's own set, the first records to arrive after the seek to the
    committed offsets would be taken off aiokafka for the held stream partitions and then
    dropped by faust (not active), and the partitions would resume past them."""
    app, source = _app(tmp_path)
    consumer = app.consumer
    changelog = TP(app.tables[TABLE].changelog_topic.get_topic_name(), 0)
    streams = {TP(source, 0), TP(source, 1)}
    buffered = {changelog: ["entry"], TP(source, 0): ["event"], TP(source, 1): ["event"]}
    drained: list[set[TP]] = []

    async def thread_getmany(active_partitions: set[TP] | None, timeout: float) -> Any:
        # while the thread waits, the app's recovery goes on
        consumer.pause_partitions({changelog})  # the changelog is read to its end
        consumer.resume_partitions(streams)  # held until the flow resumes
        # records arrive (after the seek): what aiokafka's Fetcher.fetched_records takes
        drained.append({tp for tp in buffered if not active_partitions or tp in active_partitions})
        return {}

    monkeypatch.setattr(consumer._thread, "getmany", thread_getmany)
    consumer.pause_partitions({changelog, *streams})
    consumer.resume_partitions({changelog})

    asyncio.run(consumer._wait_next_records(1.0))

    assert drained == [{changelog}]
    consumer.resume_flow()
    assert consumer._get_active_partitions() == streams
