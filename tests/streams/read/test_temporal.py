"""What a read of facts returns: now, at a valid time (as_of), at a transaction time."""

from __future__ import annotations

from datetime import UTC, datetime

from slotwise.streams.read.temporal import FactQuery, as_of, believed_at, select
from slotwise.topics.records import Fact


def _at(day: int, month: int = 3) -> datetime:
    return datetime(2026, month, day, 12, tzinfo=UTC)


def _fact(fact_id: str, value: str, **fields: object) -> Fact:
    base: dict[str, object] = {
        "schema": "fact/1",
        "fact_id": fact_id,
        "subject_id": "ana",
        "attribute": "employer",
        "value": value,
        "text": f"User works at {value}.",
        "category": "job",
        "status": "current",
        "valid_from": _at(1),
        "observed_at": _at(1),
        "recorded_at": _at(1),
        "source": "chat",
        "confidence": 0.9,
        "importance": 0.5,
        "candidate_id": f"c-{fact_id}",
    }
    return Fact.model_validate({**base, **fields})


# Datadog from 1 March (recorded 1 March), superseded by Stripe valid from 16 March,
# which slotwise learned on 14 March; Google 2020-2021 learned late, as history.
DATADOG = _fact("d", "Datadog", status="superseded", valid_to=_at(16), superseded_by="s")
STRIPE = _fact("s", "Stripe", valid_from=_at(16), recorded_at=_at(14), supersedes="d")
GOOGLE = _fact(
    "g",
    "Google",
    status="history",
    valid_from=datetime(2020, 1, 1, tzinfo=UTC),
    valid_to=datetime(2021, 1, 1, tzinfo=UTC),
    recorded_at=_at(18),
)
ARCHIVED = _fact("a", "Lisbon", attribute="home_city", status="archived")
ALL = [DATADOG, STRIPE, GOOGLE, ARCHIVED]


def _values(facts: list[Fact]) -> list[object]:
    return [f.value for f in facts]


def test_the_present_is_the_current_facts_and_history_adds_the_closed_ones() -> None:
    assert _values(select(ALL, FactQuery())) == ["Stripe"]
    assert _values(select(ALL, FactQuery(history=True))) == ["Google", "Datadog", "Stripe"]
    assert _values(select(ALL, FactQuery(include_archived=True))) == ["Stripe", "Lisbon"]


def test_as_of_is_what_was_true_then_whatever_the_status_now() -> None:
    assert _values(as_of(ALL[:3], _at(10))) == ["Datadog"]
    assert _values(as_of(ALL[:3], _at(16))) == ["Stripe"]  # valid_to is exclusive
    assert _values(as_of(ALL[:3], datetime(2020, 6, 1, tzinfo=UTC))) == ["Google"]
    assert _values(select(ALL, FactQuery(as_of=_at(10, month=2)))) == []


def test_believed_at_reconstructs_the_status_each_fact_had_then() -> None:
    before = believed_at(ALL[:3], _at(10))
    assert [(f.value, f.status, f.valid_to, f.superseded_by) for f in before] == [
        ("Datadog", "current", None, None)
    ]
    assert _values(select(ALL, FactQuery(believed_at=_at(15)))) == ["Stripe"]
    assert select(ALL, FactQuery(believed_at=datetime(2026, 2, 1, tzinfo=UTC))) == []
    # history at 15 March: Google was not known yet.
    assert _values(select(ALL, FactQuery(believed_at=_at(15), history=True))) == [
        "Datadog",
        "Stripe",
    ]


def test_both_times_at_once() -> None:
    # What slotwise believed on 15 March was true on 10 March: Datadog, closed by then.
    assert _values(select(ALL, FactQuery(as_of=_at(10), believed_at=_at(15)))) == ["Datadog"]
    # On 10 March it believed Datadog was still true on 20 March: nothing had superseded it.
    assert _values(select(ALL, FactQuery(as_of=_at(20), believed_at=_at(10)))) == ["Datadog"]


def test_an_erased_successor_leaves_the_supersession_standing() -> None:
    (alone,) = believed_at([DATADOG], _at(10))
    assert alone.status == "superseded"
