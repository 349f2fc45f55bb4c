"""What a human's accept, reject or edit does to one review item, by its mode."""

from __future__ import annotations

from datetime import timedelta

from slotwise.processors.change import Change
from slotwise.processors.model import stable_id
from slotwise.processors.resolve import fact_id_for
from slotwise.processors.review_policy import (
    Redecide,
    ReviewState,
    decide,
    held_keys,
    mode,
    rejection_keys,
)
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, ReviewItem
from tests.processors.lifecycle_facts import SUBJECT, T0, decision, stored

SCHEMA = AttributeSchema.load()
NOW = T0 + timedelta(days=30)
VERIFIED = stored(
    "c-email1", "User's email is ana@example.com.", attribute="email", value="ana@example.com",
    category="contact", verification_count=2,
)  # fmt: skip
HELD = CandidateFact(
    candidate_id="c-email2",
    subject_id=SUBJECT,
    attribute="email",
    value="ana.souza@newmail.org",
    text="User's email is ana.souza@newmail.org.",
    observed_at=T0 + timedelta(days=10),
)


def _held_item() -> ReviewItem:
    return ReviewItem(
        review_id=stable_id("review", HELD.candidate_id),
        subject_id=SUBJECT,
        kind="high_stakes",
        reason="high-stakes email",
        candidate=HELD,
        incumbent_fact_ids=(VERIFIED.fact_id,),
        created_at=T0 + timedelta(days=10),
    )


def _decide(item: ReviewItem, action: str, state: ReviewState, value: str | None = None) -> Change:
    outcome = decide(
        item, decision(action, item.review_id, value), state, SCHEMA,  # type: ignore[arg-type]
        now=NOW, embedding_model="m",
    )  # fmt: skip
    assert isinstance(outcome, Change), outcome
    return outcome


def test_accept_applies_the_held_candidate_with_the_event_it_would_have_produced() -> None:
    item = _held_item()
    assert mode(item) == "held"
    change = _decide(item, "accept", ReviewState(slot=(VERIFIED,)))
    (event,) = change.supersessions
    assert (event.old_value, event.new_value) == ("ana@example.com", "ana.souza@newmail.org")
    assert event.event_id == stable_id("supersession", VERIFIED.fact_id, fact_id_for(HELD))
    *_, record = change.reviews
    assert (record.review_id, record.status, record.command_id) == (
        item.review_id, "accepted", f"cmd-accept-{item.review_id}",
    )  # fmt: skip
    assert set(record.fact_ids) == {VERIFIED.fact_id, fact_id_for(HELD)}


def test_reject_writes_nothing_and_remembers_the_pair() -> None:
    item = _held_item()
    change = _decide(item, "reject", ReviewState(slot=(VERIFIED,)))
    assert change.facts == () and change.supersessions == ()
    (record,) = change.reviews
    assert record.status == "rejected"
    assert rejection_keys(record) == held_keys(HELD, (VERIFIED.fact_id,))
    restated = HELD.model_copy(
        update={"candidate_id": "c-email3", "value": "Ana.Souza@newmail.org "}
    )
    assert held_keys(restated, (VERIFIED.fact_id,)) == rejection_keys(record)


def test_edit_stores_the_given_value_from_the_review_source() -> None:
    change = _decide(_held_item(), "edit", ReviewState(slot=(VERIFIED,)), "ana@work.example")
    new = next(f for f in change.facts if f.status == "current")
    assert (new.value, new.source, new.confidence) == ("ana@work.example", "review", 1.0)
    assert new.text == "User's email is ana@work.example."
    assert change.reviews[-1].status == "edited"


def test_an_item_whose_incumbent_changed_is_decided_again_not_applied() -> None:
    moved_on = stored("c-email9", "User's email is z@z.org.", attribute="email", value="z@z.org",
                      category="contact", day=20)  # fmt: skip
    outcome = decide(
        _held_item(), decision("accept", "x"), ReviewState(slot=(moved_on,)), SCHEMA,
        now=NOW, embedding_model="m",
    )  # fmt: skip
    assert isinstance(outcome, Redecide)
    assert outcome.candidate == HELD and outcome.status == "superseded"


def test_a_pair_is_resolved_by_the_policy_and_a_stale_pair_writes_nothing() -> None:
    old = stored("c-old", "User is a backend engineer at Datadog.", day=1)
    new = stored("c-new", "User starts at Stripe on Monday.", day=9)
    item = ReviewItem(
        review_id="r-pair", subject_id=SUBJECT, kind="close_neighbour", reason="close",
        candidate=CandidateFact(candidate_id="c-new", subject_id=SUBJECT, text=new.text,
                                observed_at=new.observed_at),
        incumbent_fact_ids=(old.fact_id,), created_at=T0, origin="consolidation",
    )  # fmt: skip
    assert mode(item) == "pair"
    change = _decide(item, "accept", ReviewState(own=new, named={old.fact_id: old}))
    assert [(e.old_fact_id, e.new_fact_id) for e in change.supersessions] == [
        (old.fact_id, new.fact_id)
    ]
    gone = old.model_copy(update={"status": "superseded", "superseded_by": "x"})
    stale = _decide(item, "accept", ReviewState(own=new, named={old.fact_id: gone}))
    assert stale.facts == () and stale.reviews[0].status == "superseded"
    edited = _decide(item, "edit", ReviewState(own=new, named={old.fact_id: old}), "Stripe, staff")
    assert len(edited.supersessions) == 2, "the edited value supersedes both"


def test_a_revalidation_accept_clears_the_flag_and_reject_closes_the_fact() -> None:
    derived = stored("c-sum", "User is a Python engineer in Lisbon.", needs_revalidation=True,
                     derived_from=("a", "b"))  # fmt: skip
    item = ReviewItem(
        review_id="r-re", subject_id=SUBJECT, kind="ambiguous", reason="stale source",
        candidate=CandidateFact(candidate_id="c-sum", subject_id=SUBJECT, text=derived.text,
                                observed_at=derived.observed_at),
        incumbent_fact_ids=(derived.fact_id,), created_at=T0, origin="revalidation",
    )  # fmt: skip
    state = ReviewState(named={derived.fact_id: derived})
    (kept,) = _decide(item, "accept", state).facts
    assert kept.needs_revalidation is False and kept.status == "current"
    (closed,) = _decide(item, "reject", state).facts
    assert (closed.status, closed.valid_to) == ("history", NOW)


def _asked_item() -> ReviewItem:
    unsure = HELD.model_copy(
        update={"candidate_id": "c-email-unsure", "value": None, "question": "email unread"}
    )
    return ReviewItem(
        review_id=stable_id("review", unsure.candidate_id),
        subject_id=SUBJECT,
        kind="ambiguous",
        reason="reader: email unread",
        candidate=unsure,
        incumbent_fact_ids=(VERIFIED.fact_id,),
        created_at=T0 + timedelta(days=10),
    )


def test_an_accepted_question_writes_nothing() -> None:
    item = _asked_item()
    assert mode(item) == "ask"
    change = _decide(item, "accept", ReviewState(slot=(VERIFIED,)))
    assert change.facts == () and change.supersessions == ()
    assert [r.status for r in change.reviews] == ["accepted"]


def test_an_edited_question_applies_the_human_value_to_the_slot() -> None:
    change = _decide(_asked_item(), "edit", ReviewState(slot=(VERIFIED,)), "ana@work.example")
    new = next(f for f in change.facts if f.status == "current")
    assert (new.attribute, new.value, new.source) == ("email", "ana@work.example", "review")
    (event,) = change.supersessions
    assert event.old_fact_id == VERIFIED.fact_id
    assert change.reviews[-1].status == "edited"
