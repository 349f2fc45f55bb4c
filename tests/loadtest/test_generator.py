from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from slotwise.loadtest.generator import WorkloadConfig, WorkloadError, Write, generate, surface
from slotwise.loadtest.tally import Tally, contradictory_slots, stated_values, tallied
from slotwise.processors.extract import extract_candidates
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.codec import decode_record, encode_record
from slotwise.topics.records import CandidateFact, Observation

SCHEMA = AttributeSchema.load()


def _writes(**overrides: object) -> list[Write]:
    config = WorkloadConfig(**{"subjects": 50, "count": 5_000, **overrides})  # type: ignore[arg-type]
    return list(generate(config, SCHEMA))


def _tally(writes: list[Write]) -> Tally:
    tally = Tally()
    for write in writes:
        tally.record(write, SCHEMA)
    return tally


def test_same_seed_same_writes_other_seed_other_writes() -> None:
    assert _writes(count=500) == _writes(count=500)
    assert _writes(count=500) != _writes(count=500, seed=7)


def test_mix_has_the_seed_contradiction_rate_and_every_kind() -> None:
    tally = _tally(_writes(count=20_000, subjects=200))
    mix = tally.mix()
    assert mix["contradict"] == pytest.approx(0.11, abs=0.01)
    assert mix["out_of_order"] == pytest.approx(0.02, abs=0.005)
    for kind in ("add", "repeat", "multi_add", "free_text"):
        assert mix[kind] > 0.05, kind


def test_a_contradiction_changes_the_value_current_before_it() -> None:
    writes = _writes()
    tally = Tally()
    contradictions = 0
    for write in writes:
        if write.kind == "contradict":
            assert write.attribute is not None
            spec = SCHEMA.get(write.attribute)
            assert spec is not None and spec.single_valued
            incumbent = tally.current.get((write.subject_id, write.attribute))
            assert incumbent is not None and incumbent != write.value
            contradictions += 1
        tally.record(write, SCHEMA)
    assert contradictions > 0


def test_repeats_restate_a_value_and_multi_adds_add_a_new_member() -> None:
    tally = Tally()
    for write in _writes():
        slot = (write.subject_id, write.attribute or "")
        if write.kind == "repeat":
            held = tally.members.get(slot, set()) | {tally.current.get(slot)}
            assert write.value in held
        if write.kind == "multi_add":
            spec = SCHEMA.get(write.attribute)
            assert spec is not None and not spec.single_valued
            assert write.value not in tally.members.get(slot, set())
        tally.record(write, SCHEMA)


def test_free_text_tail_has_no_attribute_and_head_facts_name_the_vocabulary() -> None:
    for write in _writes(count=2_000):
        if write.kind == "free_text":
            assert write.attribute is None and write.value is None and write.category
        else:
            spec = SCHEMA.get(write.attribute)
            assert spec is not None and write.category == spec.category


def test_time_moves_forward_per_subject_except_late_arrivals() -> None:
    latest: dict[str, datetime] = {}
    late = 0
    for write in _writes():
        previous = latest.get(write.subject_id)
        if write.out_of_order:
            assert previous is not None and write.observed_at < previous
            late += 1
        else:
            assert previous is None or write.observed_at > previous
            latest[write.subject_id] = write.observed_at
    assert late > 0


def test_a_start_on_monday_is_valid_from_that_monday() -> None:
    starts = [w for w in _writes() if w.statement.endswith("on Monday.")]
    assert starts
    for write in starts:
        assert write.valid_from.weekday() == 0
        assert timedelta(0) < write.valid_from - write.observed_at <= timedelta(days=7)


def test_expected_current_is_the_latest_valid_from_ties_by_order() -> None:
    base = _writes(count=1)[0]
    t0 = datetime(2026, 3, 1, tzinfo=UTC)

    def at(seq: int, value: str, valid_from: datetime) -> Write:
        return Write(
            seq=seq,
            subject_id="s",
            session=0,
            kind="add",
            attribute="employer",
            value=value,
            category="work",
            statement=f"I work at {value}.",
            fact_text=f"User works at {value}.",
            observed_at=valid_from,
            valid_from=valid_from,
            out_of_order=False,
            seed=base.seed,
            source="chat",
        )

    tally = _tally(
        [
            at(0, "Datadog", t0),
            at(1, "Stripe", t0 + timedelta(days=2)),
            at(2, "Figma", t0 + timedelta(days=1)),  # arrives late: history
            at(3, "Canva", t0 + timedelta(days=2)),  # same instant as Stripe, later in the log
        ]
    )
    assert tally.current == {("s", "employer"): "Canva"}
    assert tally.stated[("s", "employer")] == {"Datadog", "Stripe", "Figma", "Canva"}


def test_records_validate_and_round_trip_through_the_codec() -> None:
    for write in _writes(count=300):
        candidate = write.candidate()
        observation = write.observation()
        assert decode_record(encode_record(candidate), key=write.subject_id.encode()) == candidate
        assert decode_record(encode_record(observation)) == observation
        assert isinstance(candidate, CandidateFact) and isinstance(observation, Observation)
        assert candidate.candidate_id != observation.observation_id


def test_tallied_passes_writes_through_and_records_them() -> None:
    config = WorkloadConfig(subjects=10, count=300)
    tally = Tally()
    passed = list(tallied(generate(config, SCHEMA), SCHEMA, tally))
    assert passed == list(generate(config, SCHEMA))
    assert tally.writes == 300


def test_pool_values_name_one_slot_each() -> None:
    """A value found in a text must not also read as another attribute's value."""
    writes = _writes(count=3_000)
    values: dict[str, set[str | int]] = {}
    for write in writes:
        if write.attribute is not None and write.value is not None:
            values.setdefault(write.attribute, set()).add(write.value)
    said = {(w.attribute, w.statement) for w in writes}
    for own, statement in said:
        for attribute, pool in values.items():
            if attribute == own or {own, attribute} <= {"name", "email"}:
                continue  # an address is built from the name; both are identity
            assert not stated_values(statement, attribute, pool), (statement, attribute)


def test_stated_values_match_whole_words_only() -> None:
    assert stated_values("I work at Stripe now.", "employer", ["Stripe", "Figma"]) == {"Stripe"}
    assert stated_values("User speaks Javanese.", "languages", ["Java"]) == set()
    assert stated_values("My timezone is UTC+01:00.", "timezone", ["UTC+01:00", "UTC+1"]) == {
        "UTC+01:00"
    }
    assert stated_values("I have 2 kids.", "children_count", [2, 1]) == {2}
    assert surface("plan", "Pro") == "Pro plan"


def test_contradictory_slots_counts_slots_holding_two_stated_values() -> None:
    tally = Tally(stated={("u1", "employer"): {"Datadog", "Stripe"}, ("u2", "employer"): {"A"}})
    both = {"u1": ["User works at Datadog.", "I start at Stripe on Monday."]}
    one = {"u1": ["User works at Stripe."]}
    assert contradictory_slots(both, tally) == [("u1", "employer")]
    assert contradictory_slots(one, tally) == []


@pytest.mark.parametrize(
    "overrides",
    [{"contradiction_rate": 1.5}, {"free_text_rate": 0.6, "repeat_rate": 0.6}, {"subjects": 0}],
)
def test_impossible_configurations_are_refused(overrides: dict[str, object]) -> None:
    with pytest.raises(WorkloadError):
        WorkloadConfig(**overrides)  # type: ignore[arg-type]


def test_generation_is_lazy() -> None:
    config = WorkloadConfig(subjects=10, count=10**9)
    assert len(list(itertools.islice(generate(config, SCHEMA), 5))) == 5


def test_the_rules_extractor_places_every_statement_as_written() -> None:
    """Observations replay the same slots and valid_from as the candidates they stand for."""
    checked: set[tuple[str | None, str]] = set()
    for write in _writes(count=3_000):
        if (write.attribute, write.statement) in checked:
            continue
        checked.add((write.attribute, write.statement))
        found = extract_candidates(write.observation(), SCHEMA)
        if write.attribute is None:
            assert found and all(c.attribute is None for c in found), write.statement
            continue
        placed = [c for c in found if c.attribute == write.attribute]
        assert [(c.value, c.valid_from) for c in placed] == [(write.value, write.valid_from)], (
            write.statement,
            found,
        )
