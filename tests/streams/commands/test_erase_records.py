"""The pure parts of an erasure: redaction, the residue search, the attestation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from slotwise.processors.erase_scope import plan_erasure
from slotwise.processors.model import VectorRow
from slotwise.sinks.kafka.retention import Retention, TopicRetention
from slotwise.streams.commands.erase_records import (
    Progress,
    attestation,
    erase_outputs,
    redact,
    redis_residue,
    retained_copies,
)
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import decode_record
from slotwise.topics.outbound import record_message
from slotwise.topics.records import (
    CandidateFact,
    Command,
    ErasureCheck,
    Fact,
    ReviewItem,
    SupersessionEvent,
)

T = datetime(2026, 3, 1, tzinfo=UTC)
A_ID, B_ID, C_ID = (f"{c * 8}-aaaa-4aaa-8aaa-{c * 12}" for c in "abc")


def fact(fid: str, value: str, **links: object) -> Fact:
    return Fact(
        fact_id=fid, subject_id="u1", attribute="employer", value=value,
        text=f'User works at "{value}".', category="job",
        status="superseded" if links.get("superseded_by") else "current",
        valid_from=T, observed_at=T, recorded_at=T, source="chat", confidence=0.9,
        importance=0.5, candidate_id=f"c-{value}", **links,  # type: ignore[arg-type]
    )  # fmt: skip


A = fact(A_ID, "Acme", superseded_by=B_ID)
B = fact(B_ID, "Bolt", supersedes=A_ID, superseded_by=C_ID)
C = fact(C_ID, "Corp", supersedes=B_ID)


def erase(**scope: object) -> Command:
    return Command(
        command_id="e1",
        subject_id="u1",
        command="erase",
        issued_at=T,
        **scope,  # type: ignore[arg-type]
    )


def superseding(old: Fact, new: Fact) -> StoredOutputs:
    event = SupersessionEvent(
        event_id="ev", subject_id="u1", attribute="employer", old_fact_id=old.fact_id,
        new_fact_id=new.fact_id, old_value=old.value, new_value=new.value, old_text=old.text,
        new_text=new.text, decided_by="exact", reason="changed", valid_from=T, recorded_at=T,
    )  # fmt: skip
    closed = old.model_copy(update={"superseded_by": new.fact_id, "status": "superseded"})
    return StoredOutputs.of(
        [
            record_message("facts", new.fact_id, new),
            record_message("facts", old.fact_id, closed),
            record_message("supersessions", "u1", event),
        ],
        [VectorRow(new.fact_id, "u1", new.text, "job")],
        decision="SUPERSEDE",
        reason=f"employer: {new.value!r} supersedes {old.fact_id}",
    )


def test_a_whole_subject_erase_leaves_outputs_empty_but_keeps_the_entry() -> None:
    plan = plan_erasure(erase(), [A, B, C])
    redacted = redact(superseding(B, C), plan, "e1")
    assert redacted is not None
    assert (redacted.messages, redacted.vectors) == ((), ())
    assert (redacted.decision, redacted.reason) == ("SUPERSEDE", "erased by e1")
    assert redact(StoredOutputs.of(()), plan, "e1") is None  # a watermark: nothing to do


def test_a_scoped_erase_drops_what_touches_the_fact_and_relinks_the_rest() -> None:
    plan = plan_erasure(erase(fact_id=B_ID), [A, B, C])
    redacted = redact(superseding(B, C), plan, "e1")
    assert redacted is not None
    (kept,) = [decode_record(m.value) for m in redacted.messages]
    assert isinstance(kept, Fact) and kept.fact_id == C_ID and kept.supersedes == A_ID
    assert [v.fact_id for v in redacted.vectors] == [C_ID]
    assert redacted.reason == "erased by e1"
    # An event about kept facts only is left alone; one naming B's value loses its reason.
    assert redact(StoredOutputs.of([], reason="x"), plan, "e1") is None
    quoting = redact(StoredOutputs.of([], reason="'Bolt' was older"), plan, "e1")
    assert quoting is not None and quoting.reason == "erased by e1"


def test_review_items_of_the_scope_are_dropped() -> None:
    candidate = CandidateFact(
        candidate_id="c9", subject_id="u1", attribute="employer", value="Zed",
        text="User works at Zed.", observed_at=T,
    )  # fmt: skip
    item = ReviewItem(
        review_id="r1", subject_id="u1", kind="high_stakes", reason="why",
        candidate=candidate, incumbent_fact_ids=(C_ID,), created_at=T,
    )  # fmt: skip
    outputs = StoredOutputs.of([record_message("review", "u1", item)], decision="REVIEW")
    assert redact(outputs, plan_erasure(erase(fact_id=A_ID), [A, B, C]), "e1") is None
    by_incumbent = redact(outputs, plan_erasure(erase(fact_id=C_ID), [A, B, C]), "e1")
    by_attribute = redact(outputs, plan_erasure(erase(attribute="employer"), [A, B, C]), "e1")
    assert by_incumbent is not None and by_incumbent.messages == ()
    assert by_attribute is not None and by_attribute.messages == ()


def test_an_earlier_erasures_tombstones_and_attestation_are_kept() -> None:
    earlier = erase_outputs(
        attestation(erase(fact_id=A_ID), deleted={}, checks=[], retained=[], attempts=1,
                    completed_at=T),
        [A_ID],
        [B],
    )  # fmt: skip
    redacted = redact(earlier, plan_erasure(erase(), [B, C]), "e2")
    assert redacted is not None
    assert [(m.topic, m.value is None) for m in redacted.messages] == [
        ("facts", True),
        ("erasures", False),
    ]


def test_the_residue_search_finds_ids_and_texts_wherever_they_are_held() -> None:
    clean = StoredOutputs.of([], decision="ADD", reason="erased by e1").encode()
    contents = {
        "meta": [(b"version", b"3")],
        "applied": [(b"c1", clean), (b"c2", superseding(B, C).encode())],
        "applied_at": [(b"c1", b"1.0")],
    }
    absent = "dddddddd-aaaa-4aaa-8aaa-dddddddddddd"
    found = redis_residue(contents, ids=[B_ID, absent], texts=[B.text, A.text], whole_subject=True)
    # B's id and text (JSON-escaped inside a base64 value) are found, the others are not;
    # one stored outputs entry still carries content.
    assert found == {"by_fact_id": 1, "by_text": 1, "by_subject": 1}
    found = redis_residue({"applied": [(b"c1", clean)]}, ids=[B_ID], texts=[B.text],
                          whole_subject=True)  # fmt: skip
    assert found == {"by_fact_id": 0, "by_text": 0, "by_subject": 0}
    stray = redis_residue({"review": [(b"r", b"{}")]}, ids=[], texts=[], whole_subject=True)
    assert stray["by_subject"] == 1  # a key some feature added, not erased


def test_verified_only_when_checks_were_made_and_found_nothing() -> None:
    def check(found: int) -> ErasureCheck:
        return ErasureCheck(store="redis", method="by_fact_id", looked_for=1, found=found,
                            checked_at=T)  # fmt: skip

    common = {"deleted": {}, "retained": [], "attempts": 1, "completed_at": T}
    assert attestation(erase(), checks=[check(0)], **common).verified  # type: ignore[arg-type]
    assert not attestation(erase(), checks=[], **common).verified  # type: ignore[arg-type]
    failed = attestation(erase(attribute="email"), checks=[check(0), check(2)], **common)  # type: ignore[arg-type]
    assert (failed.verified, failed.remaining, failed.scope) == (False, {"redis": 2}, "attribute")


def test_retained_copies_say_when_retention_removes_them() -> None:
    catalogue = Catalogue(prefix="p", partitions=3)
    day = 24 * 3600 * 1000
    retention = Retention(
        {
            catalogue.candidates: TopicRetention(
                catalogue.candidates, "delete", 7 * day, day, None
            ),
            catalogue.facts: TopicRetention(catalogue.facts, "compact", None, 7 * day, day),
            catalogue.observations: TopicRetention(catalogue.observations, "delete", None, day,
                                                   None),
            catalogue.review: TopicRetention(catalogue.review, "compact", None, 7 * day, None),
        },
        check_interval_ms=60_000,
        cleaner_backoff_ms=15_000,
    )  # fmt: skip
    copies = {c.store.removeprefix("kafka:p."): c for c in retained_copies(catalogue, retention, T)}
    assert set(copies) == {"candidates.v1", "facts.v1", "observations.v1", "review.v1"}
    assert copies["candidates.v1"].expires_by == T + timedelta(days=8, minutes=1)
    assert copies["facts.v1"].expires_by == T + timedelta(days=1, seconds=15)
    assert copies["observations.v1"].reach == "producers"
    assert copies["observations.v1"].expires_by is None  # retention.ms = -1
    assert copies["review.v1"].expires_by is None and "no time bound" in copies["review.v1"].note


def test_progress_round_trips() -> None:
    progress = Progress("deleted", 4, T.isoformat(), {"c": 2}, {"redis:facts": 1}, ids=("a",),
                        texts=('a "b"',))  # fmt: skip
    assert Progress.decode(progress.encode()) == progress
