"""Consolidation's pure part: the questions it asks, and what its findings change."""

from __future__ import annotations

from datetime import timedelta

from slotwise.processors.change import fingerprint
from slotwise.processors.consolidation import Finding, apply_findings, compared_at_write, plan
from slotwise.processors.review_policy import pair_key
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import Fact
from tests.processors.lifecycle_facts import T0, stored

SCHEMA = AttributeSchema.load()
NOW = T0 + timedelta(days=60)


def _vectors(facts: list[Fact], scores: dict[str, float]) -> dict[str, list[float]]:
    """2-d unit vectors whose cosine with the last fact is ``scores[fact_id]``."""
    import math  # noqa: PLC0415

    out = {facts[-1].fact_id: [1.0, 0.0]}
    for fact in facts[:-1]:
        c = scores[fact.fact_id]
        out[fact.fact_id] = [c, math.sqrt(max(0.0, 1 - c * c))]
    return out


def _planted(k: int) -> tuple[list[Fact], Fact, Fact]:
    """The contradicting fact first, then k+1 closer related facts, then the newcomer."""
    target = stored("c-target", "User is a backend engineer at Datadog.", day=1)
    related = [
        stored(f"c-r{i}", f"User starts thing {i} on Monday.", day=2 + i) for i in range(k + 1)
    ]
    newcomer = stored("c-new", "User starts at Stripe on Monday.", day=20)
    return [target, *related, newcomer], target, newcomer


def test_only_the_pairs_the_write_time_top_k_never_compared_are_asked() -> None:
    facts, target, newcomer = _planted(5)
    scores = {f.fact_id: 0.6 - 0.01 * i for i, f in enumerate(facts[1:-1])}
    scores[target.fact_id] = 0.19
    vectors = _vectors(facts, scores)
    similarity = {f: scores.get(f, 1.0) for f in vectors}
    written = compared_at_write(newcomer, facts, similarity, top_k=5, floor=0.15)
    assert target.fact_id not in written and len(written) == 5
    planned = plan(facts, vectors, top_k=5, floor=0.15)
    asked = {(q.fact.fact_id, n.fact.fact_id) for q in planned.questions for n in q.neighbours}
    assert (newcomer.fact_id, target.fact_id) in asked
    assert not any(q.fact.fact_id == newcomer.fact_id and n.fact.fact_id in written
                   for q in planned.questions for n in q.neighbours)  # fmt: skip
    assert planned.seen_at_write >= 5


def test_known_pairs_other_categories_and_two_schematized_facts_are_not_asked() -> None:
    a = stored("c-a", "User works at Datadog.", attribute="employer", value="Datadog")
    b = stored("c-b", "User works at Stripe.", attribute="role", value="x", day=3)
    c = stored("c-c", "User likes tea.", category="food", day=4)
    d = stored("c-d", "User joined Stripe.", day=5)
    vectors = {a.fact_id: [0.9, 0.436], b.fact_id: [0.5, 0.866], c.fact_id: [0.4, 0.917]}
    vectors[d.fact_id] = [1.0, 0.0]
    # top-1 at write time: d was compared with a only; (a, d) is known anyway.
    planned = plan(
        [a, b, c, d], vectors, top_k=1, floor=0.15, known={pair_key(a.fact_id, d.fact_id)}
    )
    pairs = {
        frozenset((q.fact.fact_id, n.fact.fact_id)) for q in planned.questions for n in q.neighbours
    }
    assert pairs == {frozenset((b.fact_id, d.fact_id))}, "a-b: both keyed; c: another category"
    assert (planned.seen_at_write, planned.known) == (1, 0)


def test_a_finding_is_applied_at_its_place_and_dropped_if_its_facts_changed() -> None:
    old = stored("c-old", "User is a backend engineer at Datadog.", day=1)
    new = stored("c-new", "User starts at Stripe on Monday.", day=9)
    finding = Finding("match", new=new.fact_id, old=old.fact_id,
                      prints=(fingerprint(new), fingerprint(old)), why="matched")  # fmt: skip
    facts = {f.fact_id: f for f in (old, new)}
    change, dropped = apply_findings([finding], facts, SCHEMA, now=NOW, command_id="c1")
    assert dropped == 0 and [e.decided_by for e in change.supersessions] == ["consolidation"]
    # A write superseded the old fact while the pass was asking the model.
    moved = {
        **facts,
        old.fact_id: old.model_copy(update={"status": "superseded", "superseded_by": "w"}),
    }
    change, dropped = apply_findings([finding, finding], moved, SCHEMA, now=NOW, command_id="c1")
    assert dropped == 2 and change.facts == () and change.supersessions == ()
    rejected = {pair_key(old.fact_id, new.fact_id)}
    change, _ = apply_findings(
        [finding], facts, SCHEMA, now=NOW, command_id="c1", rejected=rejected
    )
    assert change.supersessions == ()


def test_a_finding_against_a_fact_an_earlier_finding_retired_is_dropped() -> None:
    a = stored("c-a", "User lives in Lisbon.", day=1)
    b = stored("c-b", "User lives in Paris.", day=2)
    c = stored("c-c", "User lives in Berlin.", day=3)
    first = Finding("match", new=c.fact_id, old=a.fact_id, prints=(fingerprint(c), fingerprint(a)))
    second = Finding("match", new=b.fact_id, old=a.fact_id, prints=(fingerprint(b), fingerprint(a)))
    facts = {f.fact_id: f for f in (a, b, c)}
    change, dropped = apply_findings([first, second], facts, SCHEMA, now=NOW, command_id="c1")
    assert len(change.supersessions) == 1 and dropped == 1
    assert Finding.load(first.dump()) == first


def test_a_revalidation_keeps_rewrites_or_asks_a_human() -> None:
    derived = stored("c-s", "User is a Datadog engineer in Lisbon.", needs_revalidation=True,
                     derived_from=("x",))  # fmt: skip
    facts = {derived.fact_id: derived}
    keep = Finding("keep", new=derived.fact_id, prints=(fingerprint(derived),))
    (kept,) = apply_findings([keep], facts, SCHEMA, now=NOW, command_id="c")[0].facts
    assert kept.needs_revalidation is False
    rewrite = Finding("rewrite", new=derived.fact_id, prints=(fingerprint(derived),),
                      text="User is a Stripe engineer in Lisbon.", sources=("y",))  # fmt: skip
    change, _ = apply_findings([rewrite], facts, SCHEMA, now=NOW, command_id="c")
    new = next(f for f in change.facts if f.status == "current")
    assert (new.text, new.derived_from, new.needs_revalidation) == (rewrite.text, ("y",), False)
    ask = Finding("revalidate", new=derived.fact_id, prints=(fingerprint(derived),))
    (item,) = apply_findings([ask], facts, SCHEMA, now=NOW, command_id="c")[0].reviews
    assert (item.origin, item.kind) == ("revalidation", "ambiguous")
