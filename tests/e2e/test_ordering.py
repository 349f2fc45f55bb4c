"""Parallel sessions cannot race: 8 producer processes contradict each other on the same slots."""

from __future__ import annotations

import itertools
import multiprocessing
import uuid
from collections import defaultdict
from datetime import datetime
from functools import partial

import pytest

from slotwise.topics.codec import decode_record
from slotwise.topics.records import CandidateFact, Fact, SupersessionEvent
from tests.e2e.harness import Pipeline, produce_contradictions, store_call

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus, pytest.mark.slow]

PRODUCERS = 8
WRITES_EACH = 150
ATTRIBUTES = ("employer", "home_city", "diet", "plan")


def test_racing_producers_leave_one_current_fact_per_slot_in_valid_time_order(
    pipeline: Pipeline,
) -> None:
    subjects = [f"race-{uuid.uuid4().hex[:6]}-{i}" for i in range(12)]
    pipeline.worker("a").wait_healthy()
    pipeline.worker("b").wait_healthy()  # two workers, so partitions move while writes race

    race = partial(
        produce_contradictions,
        pipeline.settings,
        pipeline.catalogue.candidates,
        subjects=subjects,
        attributes=ATTRIBUTES,
        count=WRITES_EACH,
    )
    with multiprocessing.get_context("spawn").Pool(PRODUCERS) as pool:
        pending = [pool.apply_async(race, (n,), {"seed": n}) for n in range(PRODUCERS)]
        results = [p.get(120) for p in pending]
    writes = [w for result in results for w in result]
    assert len(writes) == PRODUCERS * WRITES_EACH
    ends: dict[int, int] = {}
    for *_, partition, offset in writes:
        ends[partition] = max(ends.get(partition, 0), offset + 1)
    pipeline.wait_committed(pipeline.catalogue.candidates, ends, timeout=300)

    # What the log says must win: the latest valid_from, ties broken by log order.
    log_order = {cid: (p, o) for cid, _s, _a, _v, p, o in writes}
    published = {}
    for _key, value, _ in pipeline.read_committed(pipeline.catalogue.candidates):
        candidate = decode_record(value, expect=(CandidateFact,))
        assert isinstance(candidate, CandidateFact)
        published[candidate.candidate_id] = candidate
    winner: dict[tuple[str, str], tuple[datetime, tuple[int, int], str]] = {}
    for cid, subject, attribute, value, *_ in writes:
        key = (published[cid].effective_valid_from, log_order[cid], value)
        slot = (subject, attribute)
        if slot not in winner or key > winner[slot]:
            winner[slot] = key

    events_by_slot: dict[tuple[str, str | None], list[SupersessionEvent]] = defaultdict(list)
    event_ids: list[str] = []
    for _key, value, _ in pipeline.read_committed(pipeline.catalogue.supersessions):
        event = decode_record(value, expect=(SupersessionEvent,))
        assert isinstance(event, SupersessionEvent)
        event_ids.append(event.event_id)
        events_by_slot[(event.subject_id, event.attribute)].append(event)
    assert len(event_ids) == len(set(event_ids)), "a supersession event was published twice"

    for subject in subjects:
        facts = store_call(pipeline, "facts", subject, include_history=True)
        assert isinstance(facts, list)
        for attribute in ATTRIBUTES:
            slot_facts: list[Fact] = [f for f in facts if f.attribute == attribute]
            if (subject, attribute) not in winner:
                assert slot_facts == []
                continue
            _assert_chain(
                slot_facts, winner[(subject, attribute)][2], events_by_slot[(subject, attribute)]
            )


def _assert_chain(facts: list[Fact], expected: str, events: list[SupersessionEvent]) -> None:
    current = [f for f in facts if f.status == "current"]
    assert [f.value for f in current] == [expected], (
        "not exactly one current fact, or the wrong one"
    )
    chain = [f for f in facts if f.status != "history"]
    by_id = {f.fact_id: f for f in chain}
    # Walk back from the current fact: every non-history fact, once, newest to oldest.
    walked = [current[0]]
    while walked[-1].supersedes is not None:
        previous = by_id[walked[-1].supersedes]
        assert previous.superseded_by == walked[-1].fact_id, "links disagree"
        assert previous.valid_to == walked[-1].valid_from
        assert previous.valid_from <= walked[-1].valid_from, "chain out of valid-time order"
        walked.append(previous)
    assert len(walked) == len(chain), "a gap: some superseded fact is not on the chain"
    supersedes = [f.supersedes for f in chain if f.supersedes]
    assert len(supersedes) == len(set(supersedes)), "a fork: one fact superseded twice"
    for history in (f for f in facts if f.status == "history"):
        assert history.supersedes is None and history.valid_to is not None
    # The events are the chain, once each, in log order.
    assert [(e.old_fact_id, e.new_fact_id) for e in events] == [
        (older.fact_id, newer.fact_id) for newer, older in itertools.pairwise(walked)
    ][::-1]
