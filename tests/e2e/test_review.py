"""The review loop end to end: a human accepts, rejects or edits an item with the CLI.

A verified email contradicted by a new one is held for review (nothing
written). The decision travels as a command on the subject's log; applying it
is idempotent (the same decision again, the same command again, a second
consumer group replaying the whole log: nothing changes twice), and an item
whose incumbent changed meanwhile is re-evaluated, not applied.
"""

from __future__ import annotations

import json

import pytest

from slotwise.processors.model import stable_id
from slotwise.processors.resolve import fact_id_for
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.records import CandidateFact, Command, ReviewItem
from tests.e2e.harness import Pipeline, store_call
from tests.e2e.lifecycle import (
    apply,
    candidate,
    cli,
    events,
    facts,
    open_items,
    review_records,
    reviews_call,
    settle,
)

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

OLD, NEW = "ana@example.com", "ana.souza@newmail.org"


def _email(subject: str, value: str, day: float, **fields: object) -> CandidateFact:
    return candidate(subject, f"User's email is {value}.", day, attribute="email", value=value,
                     category="contact", **fields)  # fmt: skip


def _held(pipeline: Pipeline, subject: str) -> tuple[CandidateFact, CandidateFact, ReviewItem]:
    """A verified email (stated twice) and a contradicting one, held for review."""
    first, held = _email(subject, OLD, 1), _email(subject, NEW, 5)
    apply(pipeline, [first, _email(subject, OLD, 2), held])
    (item,) = open_items(pipeline, subject)
    assert (item.kind, item.origin, item.status) == ("high_stakes", "write", "open")
    assert item.review_id == stable_id("review", held.candidate_id)
    return first, held, item


def _listed(pipeline: Pipeline, *args: str) -> list[dict[str, object]]:
    out = cli(pipeline, "review", "list", "--json", *args).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _current(pipeline: Pipeline, subject: str) -> list[object]:
    return [f.value for f in facts(pipeline, subject) if f.status == "current"]


def test_accept_reject_and_edit_end_to_end_each_idempotent(pipeline: Pipeline) -> None:
    pipeline.worker().wait_healthy()
    subjects = {action: f"{action}-{stable_id('s', pipeline.group_id)[:6]}" for action in
                ("accept", "reject", "edit")}  # fmt: skip
    held = {action: _held(pipeline, subject) for action, subject in subjects.items()}
    listed = {row["review_id"] for row in _listed(pipeline)}
    assert listed == {item.review_id for _, _, item in held.values()}, "review list sees all"

    # accept: the held candidate is applied with the supersession it would have made.
    first, new, item = held["accept"]
    assert "accepted" in cli(pipeline, "review", "accept", item.review_id).stdout
    old_id, new_id = fact_id_for(first), fact_id_for(new)
    (event,) = events(pipeline, subjects["accept"])
    assert (event.old_fact_id, event.new_fact_id) == (old_id, new_id)
    assert event.event_id == stable_id("supersession", old_id, new_id)
    assert _current(pipeline, subjects["accept"]) == [NEW]

    # reject: nothing written; the same value stated again is not asked again.
    _, _, rejected = held["reject"]
    cli(pipeline, "review", "reject", rejected.review_id)
    again = _email(subjects["reject"], "Ana.Souza@newmail.org", 9)
    apply(pipeline, [again])
    blob = store_call(pipeline, "applied", subjects["reject"], again.candidate_id)
    assert isinstance(blob, bytes) and StoredOutputs.decode(blob).decision == "NOOP"
    assert _current(pipeline, subjects["reject"]) == [OLD]
    assert open_items(pipeline, subjects["reject"]) == []

    # edit: the human's value is stored, from the review source.
    _, _, edited = held["edit"]
    cli(pipeline, "review", "edit", edited.review_id, "--value", "ana@work.example")
    (current,) = [f for f in facts(pipeline, subjects["edit"]) if f.status == "current"]
    assert (current.value, current.source) == ("ana@work.example", "review")

    resolved = {a: reviews_call(pipeline, "get", subjects[a], held[a][2].review_id) for a in held}
    assert {a: r.status for a, r in resolved.items()} == {
        "accept": "accepted", "reject": "rejected", "edit": "edited",
    }  # fmt: skip
    for action, subject in subjects.items():
        records = [
            r for r in review_records(pipeline, subject) if r.review_id == held[action][2].review_id
        ]
        assert [r.status for r in records] == ["open", resolved[action].status], "review/1 tells"
    assert _listed(pipeline) == []
    before = {s: facts(pipeline, s) for s in subjects.values()}

    # Idempotent: the same decision again (the CLI refuses: nothing is open), the same
    # command again, a second decision of another kind, and a whole replay of the log.
    refused = cli(pipeline, "review", "accept", item.review_id, check=False)
    assert refused.returncode == 2 and "no open review item" in refused.stderr
    duplicate = Command(
        command_id=stable_id("review-decision", item.review_id, "accept", "None"),
        subject_id=subjects["accept"], command="review", issued_at=event.recorded_at,
        review_id=item.review_id, action="accept",
    )  # fmt: skip
    other = duplicate.model_copy(update={"command_id": "a-later-reject", "action": "reject"})
    pipeline.publish(pipeline.catalogue.candidates, [duplicate, other])
    settle(pipeline)
    pipeline.stop_all()
    pipeline.group_id = f"{pipeline.group_id}-replay"  # a second group: the whole log again
    pipeline.worker().wait_healthy()
    settle(pipeline, timeout=180)
    assert {s: facts(pipeline, s) for s in subjects.values()} == before
    after = {a: reviews_call(pipeline, "get", subjects[a], held[a][2].review_id) for a in held}
    assert after == resolved


def test_a_stale_item_is_re_evaluated_not_applied(pipeline: Pipeline) -> None:
    pipeline.worker().wait_healthy()
    subject = f"stale-{stable_id('s', pipeline.group_id)[:6]}"
    incumbent = _email(subject, OLD, 1, confidence=0.95)
    held = _email(subject, NEW, 5, confidence=0.8)
    apply(pipeline, [incumbent, held])
    (item,) = open_items(pipeline, subject)
    # Meanwhile the subject states a change, surer than the incumbent: it is superseded.
    changed = _email(subject, "ana@third.example", 3, confidence=0.99, stated_change=True)
    apply(pipeline, [changed])
    assert _current(pipeline, subject) == ["ana@third.example"]

    cli(pipeline, "review", "accept", item.review_id)
    old = reviews_call(pipeline, "get", subject, item.review_id)
    assert old.status == "superseded" and old.replaced_by is not None
    (fresh,) = open_items(pipeline, subject)
    assert fresh.review_id == old.replaced_by
    assert fresh.incumbent_fact_ids == (fact_id_for(changed),), "asked against the new incumbent"
    assert _current(pipeline, subject) == ["ana@third.example"], "nothing applied blindly"
    assert fact_id_for(held) not in {f.fact_id for f in facts(pipeline, subject)}
