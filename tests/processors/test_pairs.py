"""The policy applied to stored facts: pairs found after the write, facts moved into a slot."""

from __future__ import annotations

from datetime import timedelta

from slotwise.processors.change import Change, fingerprint, supersession_id
from slotwise.processors.pairs import place, resolve_pair
from slotwise.processors.schema import AttributeSchema
from tests.processors.lifecycle_facts import T0, stored

SCHEMA = AttributeSchema.load()
NOW = T0 + timedelta(days=40)


def _pair(a_day: int, b_day: int, **fields: object) -> Change:
    datadog = stored("c-datadog", "User is a backend engineer at Datadog.", day=a_day)
    stripe = stored("c-stripe", "User starts at Stripe on Monday.", day=b_day, **fields)
    return resolve_pair(
        datadog, stripe, None, decided_by="consolidation", now=NOW, review_id="r",
        origin="consolidation", why="found",
    )  # fmt: skip


def test_the_newer_fact_supersedes_the_older_in_place_with_the_write_paths_event_id() -> None:
    change = _pair(1, 10)
    new, old = change.facts
    assert (new.text, new.status, new.supersedes) == (
        "User starts at Stripe on Monday.",
        "current",
        old.fact_id,
    )
    assert (old.status, old.superseded_by, old.valid_to) == (
        "superseded",
        new.fact_id,
        new.valid_from,
    )
    assert new.recorded_at == T0 + timedelta(days=9), "the newer fact keeps its own recorded_at"
    (event,) = change.supersessions
    assert event.event_id == supersession_id(old.fact_id, new.fact_id)
    assert (event.decided_by, event.recorded_at) == ("consolidation", NOW)


def test_the_order_of_the_arguments_does_not_decide_which_one_is_newer() -> None:
    assert _pair(1, 10).facts == _pair(1, 10).facts
    datadog = stored("c-datadog", "User is a backend engineer at Datadog.", day=1)
    stripe = stored("c-stripe", "User starts at Stripe on Monday.", day=10)
    flipped = resolve_pair(
        stripe, datadog, None, decided_by="consolidation", now=NOW, review_id="r",
        origin="consolidation", why="found",
    )  # fmt: skip
    assert flipped.facts == _pair(1, 10).facts


def test_a_restatement_and_a_many_valued_pair_change_nothing() -> None:
    a = stored("c-a", "User speaks Spanish.", attribute="languages", value="Spanish", day=1)
    b = stored("c-b", "User speaks Portuguese.", day=5)
    many = resolve_pair(
        a, b, SCHEMA.get("languages"), decided_by="consolidation", now=NOW, review_id="r",
        origin="consolidation", why="found",
    )  # fmt: skip
    assert many.facts == () and many.decision == "NOOP"
    same = stored("c-c", "User speaks Spanish.", day=7)
    restated = resolve_pair(
        stored("c-d", "User speaks Spanish.", day=2), same, None, decided_by="consolidation",
        now=NOW, review_id="r", origin="consolidation", why="found",
    )  # fmt: skip
    assert restated.facts == () and restated.supersessions == ()


def test_a_high_stakes_contradiction_of_a_corroborated_fact_goes_to_review() -> None:
    spec = SCHEMA.get("email")
    old = stored("c-e1", "User's email is a@x.org.", attribute="email", value="a@x.org",
                 verification_count=2)  # fmt: skip
    new = stored("c-e2", "User's email is b@y.org.", day=9)
    change = resolve_pair(
        old, new, spec, decided_by="consolidation", now=NOW, review_id="rev-1",
        origin="consolidation", why="found",
    )  # fmt: skip
    assert change.facts == () and change.supersessions == ()
    (item,) = change.reviews
    assert (item.review_id, item.origin, item.incumbent_fact_ids) == (
        "rev-1",
        "consolidation",
        (old.fact_id,),
    )


def test_a_fact_moved_into_an_empty_slot_keeps_its_id_and_takes_the_attribute() -> None:
    spec = SCHEMA.get("diet")
    assert spec is not None
    fact = stored("c-v", "User is vegetarian.", category="preference")
    change = place(fact, spec, "vegetarian", [], now=NOW, review_id="r")
    (moved,) = change.facts
    assert (moved.fact_id, moved.attribute, moved.value, moved.category) == (
        fact.fact_id, "diet", "vegetarian", spec.category,
    )  # fmt: skip
    assert fingerprint(moved) != fingerprint(fact)
    assert change.vector_rows[0].category == spec.category


def test_a_moved_fact_is_resolved_against_what_the_slot_holds() -> None:
    spec = SCHEMA.get("employer")
    assert spec is not None
    incumbent = stored(
        "c-i", "User works at Datadog.", attribute="employer", value="Datadog", day=3
    )
    newer = place(stored("c-n", "User joined Stripe.", day=9), spec, "Stripe", [incumbent],
                  now=NOW, review_id="r")  # fmt: skip
    assert [e.old_value for e in newer.supersessions] == ["Datadog"]
    older = place(stored("c-o", "User worked at Acme.", day=1), spec, "Acme", [incumbent],
                  now=NOW, review_id="r")  # fmt: skip
    (closed,) = older.facts
    assert (closed.status, closed.valid_to) == ("history", incumbent.valid_from)
    same = place(stored("c-s", "User works for Datadog.", day=5), spec, "Datadog", [incumbent],
                 now=NOW, review_id="r")  # fmt: skip
    by_id = {f.fact_id: f for f in same.facts}
    assert by_id[incumbent.fact_id].verification_count == 1
    assert by_id[fact_id_of(same, exclude=incumbent.fact_id)].status == "history"


def fact_id_of(change: Change, *, exclude: str) -> str:
    return next(f.fact_id for f in change.facts if f.fact_id != exclude)
