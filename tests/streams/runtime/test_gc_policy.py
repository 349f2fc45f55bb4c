"""The worker's GC policy: what setup built is frozen, collections are spaced out."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from slotwise.streams.config import Settings
from slotwise.streams.runtime.gc_policy import settle_heap


@pytest.fixture
def restored_gc() -> Iterator[None]:
    """The test session's collector as it was: thresholds, nothing frozen."""
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored_gc")
def test_setup_survivors_are_frozen_and_young_collections_spaced_out() -> None:
    built_by_setup = [{"row": i} for i in range(1000)]

    settle_heap(50_000)

    assert gc.get_freeze_count() >= len(built_by_setup)
    assert gc.get_threshold() == (50_000, 20, 20)


@pytest.mark.usefixtures("restored_gc")
def test_a_cycle_made_after_setup_is_still_collected() -> None:
    settle_heap(50_000)

    class Node:
        other: object = None

    a, b = Node(), Node()
    a.other, b.other = b, a
    del a, b
    # Unreachable cycles are still found; they only wait for a later collection.
    assert gc.collect() >= 2


@pytest.mark.usefixtures("restored_gc")
def test_zero_keeps_cpythons_defaults() -> None:
    before = gc.get_threshold()

    settle_heap(0)

    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_worker_settles_its_heap_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLOTWISE_GC_YOUNG_THRESHOLD", raising=False)
    assert Settings().gc_young_threshold == 50_000
    monkeypatch.setenv("SLOTWISE_GC_YOUNG_THRESHOLD", "0")
    assert Settings().gc_young_threshold == 0
