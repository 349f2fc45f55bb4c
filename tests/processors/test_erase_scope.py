"""Scope resolution of an erase: what goes, what stays, and how chains are re-linked."""

from __future__ import annotations

from datetime import UTC, datetime

from slotwise.processors.erase_scope import plan_erasure, scope_of
from slotwise.topics.records import Command, Fact

T = datetime(2026, 3, 1, tzinfo=UTC)


def fact(
    fid: str, attribute: str | None = "employer", subject: str = "u1", **links: object
) -> Fact:
    return Fact(
        fact_id=fid,
        subject_id=subject,
        attribute=attribute,
        value=fid,
        text=f"User {fid}.",
        category=None,
        status="superseded" if links.get("superseded_by") else "current",
        valid_from=T,
        observed_at=T,
        recorded_at=T,
        source="chat",
        confidence=0.9,
        importance=0.5,
        candidate_id=f"c-{fid}",
        **links,  # type: ignore[arg-type]
    )


def erase(**scope: object) -> Command:
    return Command(
        command_id="e1",
        subject_id="u1",
        command="erase",
        issued_at=T,
        **scope,  # type: ignore[arg-type]
    )


CHAIN = [
    fact("A", superseded_by="B"),
    fact("B", supersedes="A", superseded_by="C"),
    fact("C", supersedes="B"),
    fact("H", attribute="home_city"),
]


def test_the_scope_is_the_narrowest_thing_named() -> None:
    assert scope_of(erase()) == "subject"
    assert scope_of(erase(attribute="employer")) == "attribute"
    assert scope_of(erase(fact_id="B", attribute="employer")) == "fact"


def test_a_subject_erase_takes_every_fact_of_the_subject_and_no_other() -> None:
    plan = plan_erasure(erase(), [*CHAIN, fact("X", subject="u2")])
    assert plan.erased_ids == ("A", "B", "C", "H")
    assert plan.relinked == () and plan.kept_ids == frozenset()


def test_an_attribute_erase_keeps_the_other_attributes() -> None:
    plan = plan_erasure(erase(attribute="home_city"), CHAIN)
    assert plan.erased_ids == ("H",)
    assert plan.kept_ids == {"A", "B", "C"} and plan.relinked == ()


def test_a_fact_and_an_attribute_together_never_widen_the_scope() -> None:
    assert plan_erasure(erase(fact_id="B", attribute="home_city"), CHAIN).erased == ()
    assert plan_erasure(erase(fact_id="nope"), CHAIN).erased == ()


def test_erasing_the_middle_of_a_chain_links_its_ends() -> None:
    plan = plan_erasure(erase(fact_id="B"), CHAIN)
    relinked = {f.fact_id: f for f in plan.relinked}
    assert plan.erased_ids == ("B",)
    assert relinked["A"].superseded_by == "C" and relinked["A"].status == "superseded"
    assert relinked["C"].supersedes == "A"


def test_erasing_the_current_fact_does_not_bring_its_predecessor_back() -> None:
    (b,) = plan_erasure(erase(fact_id="C"), CHAIN).relinked
    assert (b.fact_id, b.superseded_by, b.status) == ("B", None, "superseded")


def test_consecutive_erased_facts_are_skipped_together() -> None:
    chain = [
        fact("A", superseded_by="B"),
        fact("B", supersedes="A", superseded_by="C", derived_from=("Z",)),
        fact("C", supersedes="B", superseded_by="D", derived_from=("B",)),
        fact("D", supersedes="C"),
        fact("Z", attribute="home_city"),
    ]
    plan = plan_erasure(erase(attribute="home_city"), chain)
    # B was derived from Z and C from B: both go with Z.
    assert plan.erased_ids == ("B", "C", "Z") and plan.derived == ("B", "C")
    relinked = {f.fact_id: f for f in plan.relinked}
    assert relinked["A"].superseded_by == "D" and relinked["D"].supersedes == "A"
    # An earlier state of a kept fact is re-pointed the same way (replayed outputs).
    old_a = fact("A", superseded_by="C")
    assert plan.relink(old_a) is not None and plan.relink(old_a).superseded_by == "D"  # type: ignore[union-attr]
    assert plan.relink(fact("H")) is None


def test_texts_a_kept_fact_also_holds_are_not_looked_for() -> None:
    twin = fact("T").model_copy(update={"text": "User B."})
    plan = plan_erasure(erase(fact_id="B"), [*CHAIN, twin])
    assert plan.texts == ()
    assert plan_erasure(erase(fact_id="B"), CHAIN).texts == ("User B.",)
