"""The write path over the in-memory ports: decide once, replay the stored decision."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from slotwise.processors.cascade import Cascade
from slotwise.processors.extract import RulesExtractor
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import InMemoryState, InMemoryVectors, ScriptedMatcher
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.streams.write.path import WritePath
from slotwise.topics.codec import decode_record
from slotwise.topics.records import CandidateFact, Command, Observation, SupersessionEvent

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)
SUBJECT = "user-7"


def _embed(texts: object) -> list[list[float]]:
    return [[1.0, 0.0] for _ in texts]  # type: ignore[attr-defined]


def write_path() -> tuple[WritePath, InMemoryState, InMemoryVectors]:
    schema = AttributeSchema.load()
    state, vectors = InMemoryState(), InMemoryVectors(_embed)
    cascade = Cascade(
        schema, state.facts, vectors, ScriptedMatcher([]), now=lambda: NOW, embedding_model="t"
    )
    return WritePath(RulesExtractor(schema), cascade, state, vectors, lambda: NOW), state, vectors


def employer(cid: str, value: str, day: int) -> CandidateFact:
    return CandidateFact(
        candidate_id=cid,
        subject_id=SUBJECT,
        attribute="employer",
        value=value,
        text=f"User works at {value}.",
        observed_at=datetime(2026, 3, day, 9, 0, tzinfo=UTC),
    )


def test_a_supersession_is_decided_once_and_replayed_byte_for_byte() -> None:
    path, state, vectors = write_path()

    async def scenario() -> tuple[tuple[object, ...], tuple[object, ...]]:
        await path.on_candidate(employer("c1", "Datadog", 2))
        first = await path.on_candidate(employer("c2", "Stripe", 9))
        again = await path.on_candidate(employer("c2", "Stripe", 9))
        return first, again

    first, again = asyncio.run(scenario())
    assert first == again
    events = [
        decode_record(m.value, expect=(SupersessionEvent,))
        for m in first
        if m.topic == "supersessions"  # type: ignore[attr-defined]
    ]
    assert [(e.old_value, e.new_value) for e in events] == [("Datadog", "Stripe")]  # type: ignore[union-attr]
    assert state.versions[SUBJECT] == 2  # the replay wrote nothing
    stored = StoredOutputs.decode(state.applied[(SUBJECT, "c2")])
    assert stored.decision == "SUPERSEDE"
    assert [f.value for f in state.facts.current(SUBJECT, "employer")] == ["Stripe"]
    assert vectors.flushes == 0  # rows wait for the checkpoint's flush


def test_a_decision_against_a_state_that_moved_is_computed_again() -> None:
    path, state, _ = write_path()
    real_apply = state.apply
    moved = False

    async def racing_apply(*args: object, **kwargs: object) -> object:
        nonlocal moved
        if not moved:  # another writer lands between the snapshot and this write
            moved = True
            await real_apply(SUBJECT, "other", expected_version=0, facts=(), outputs=b"", now=NOW)
        return await real_apply(*args, **kwargs)  # type: ignore[arg-type]

    state.apply = racing_apply  # type: ignore[method-assign]
    asyncio.run(path.on_candidate(employer("c1", "Datadog", 2)))
    assert state.stale_answers == 1
    assert (SUBJECT, "c1") in state.applied and state.versions[SUBJECT] == 2


def test_an_observation_emits_its_candidates_then_the_watermark() -> None:
    path, state, _ = write_path()
    turn = Observation(
        observation_id="o1",
        subject_id=SUBJECT,
        text="I'm a backend engineer at Datadog.",
        observed_at=datetime(2026, 3, 2, 9, 0, tzinfo=UTC),
    )

    async def scenario() -> None:
        outputs = await path.on_observation(turn)
        records = [decode_record(m.value) for m in outputs]
        assert isinstance(records[-1], Command) and records[-1].command == "watermark"
        assert any(isinstance(r, CandidateFact) and r.attribute == "employer" for r in records)
        for record in records:
            if isinstance(record, CandidateFact):
                await path.on_candidate(record)
        await path.on_command(records[-1])
        await path.on_command(records[-1])  # a replayed watermark applies nothing twice

    asyncio.run(scenario())
    assert state.observations[SUBJECT] == ["o1"]
