"""The HTTP writes against a real worker: observations and candidates applied and read back,
an erasure attested, forget and restore as commands, review decisions, and every refusal a
4xx naming its field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from slotwise.client import Client, ErasureAttestation, InvalidRequest
from slotwise.streams.api import telemetry
from slotwise.streams.config import Settings
from tests.streams.api.server import Seeded

pytestmark = [pytest.mark.redis, pytest.mark.kafka, pytest.mark.milvus]


def _post(base: str, path: str, body: object, **params: object) -> httpx.Response:
    return httpx.post(base + path, json=body, params=params, timeout=90)  # type: ignore[arg-type]


def _subject() -> str:
    return f"w-{uuid.uuid4().hex[:8]}"


def test_an_observation_waited_for_says_what_was_decided_and_is_idempotent(written: str) -> None:
    subject = _subject()
    turn = {"observation_id": "turn-1", "text": "I work at Datadog."}
    answer = _post(written, f"/v1/subjects/{subject}/observations", turn, wait=30)
    assert answer.status_code == 200, answer.text
    (one,) = answer.json()["written"]
    assert one["applied"] and [d["decision"] for d in one["decisions"]] == ["ADD"], one
    assert [f["value"] for f in one["facts"]] == ["Datadog"]
    again = _post(written, f"/v1/subjects/{subject}/observations", turn, wait=30).json()
    assert again["written"][0]["applied"]
    facts = httpx.get(f"{written}/v1/subjects/{subject}/facts", timeout=30).json()["facts"]
    assert [f["value"] for f in facts] == ["Datadog"]  # the same id twice is applied once


def test_a_batch_answers_at_once_with_the_watermark_to_wait_on(written: str) -> None:
    subject = _subject()
    batch = {
        "observations": [
            {"text": "I live in Porto.", "observed_at": "2026-01-01T09:00:00Z"},
            {"text": "I moved to Lisbon.", "observed_at": "2026-02-01T09:00:00Z"},
        ]
    }
    answer = _post(written, f"/v1/subjects/{subject}/observations", batch)
    assert answer.status_code == 202, answer.text
    after = answer.json()["after_observation"]
    assert after == answer.json()["written"][-1]["id"]
    read = httpx.get(
        f"{written}/v1/subjects/{subject}/facts",
        params={"after_observation": after, "wait_s": 30, "history": "true"},
        timeout=60,
    )
    assert read.status_code == 200, read.text
    assert {f["value"] for f in read.json()["facts"]} >= {"Lisbon"}


def test_candidates_erase_forget_and_restore(written: str) -> None:
    subject = _subject()
    imported = {
        "candidates": [
            {"attribute": "employer", "value": "Acme", "text": "User works at Acme."},
            {"attribute": "home_city", "value": "Porto", "text": "User lives in Porto."},
        ]
    }
    answer = _post(written, f"/v1/subjects/{subject}/candidates", imported, wait=30)
    assert answer.status_code == 200, answer.text
    assert all(w["applied"] for w in answer.json()["written"])

    erased = _post(written, f"/v1/subjects/{subject}/erase", {"attribute": "employer"}, wait=30)
    assert erased.status_code == 200, erased.text
    attestation = erased.json()["attestation"]
    assert attestation["verified"] and attestation["scope"] == "attribute"
    assert attestation["command_id"] == erased.json()["command_id"]
    facts = httpx.get(f"{written}/v1/subjects/{subject}/facts", timeout=30).json()["facts"]
    assert [f["value"] for f in facts] == ["Porto"]

    forgot = _post(written, f"/v1/subjects/{subject}/forget", {}, wait=30)
    assert forgot.status_code == 200 and forgot.json()["applied"], forgot.text
    missing = _post(written, "/v1/facts/no-such-fact/restore", {})
    assert missing.status_code == 404 and missing.json()["field"] == "fact_id"
    named = _post(written, "/v1/facts/no-such-fact/restore", {"subject_id": subject})
    assert named.status_code == 202 and named.json()["command"] == "restore"


def test_review_decisions_are_commands(written: str) -> None:
    path = f"/v1/subjects/{_subject()}/review/r-1"
    edit = _post(written, path, {"action": "edit"})
    assert edit.status_code == 422 and edit.json()["field"] == "value"
    accepted = _post(written, path, {"action": "accept"})
    assert accepted.status_code == 202 and accepted.json()["command_id"]
    assert _post(written, path, {"action": "accept"}).json() == accepted.json()


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("observations", {"text": "hi", "subject_id": "bob"}, "subject_id"),
        ("observations", {"text": ""}, "text"),
        ("observations", {"text": "hi", "observed_at": "2026-01-01T00:00:00"}, "observed_at"),
        ("observations", {"observations": []}, "observations"),
        ("observations", {"text": "x" * 70_000}, "text"),
        (
            "observations",
            {"observations": [{"text": "a"}, {"text": "x" * 70_000}]},
            "observations.1.text",
        ),
        ("observations", {"observations": [{"text": "hi"}] * 101}, "observations"),
        ("candidates", {"candidates": [{"text": "t", "confidence": 2}]}, "candidates.0.confidence"),
        ("erase", {"fact_id": "f", "attribute": "a"}, "not both"),
        ("erase", {"fact": "f"}, "fact"),
        ("forget", {"as_of": "yesterday"}, "as_of"),
        # Pydantic's lax mode reads a numeric string as Unix seconds; the document says RFC 3339.
        ("forget", {"as_of": "3"}, "as_of"),
        ("observations", {"text": "hi", "observed_at": "1773482400"}, "observed_at"),
        # Nor a number or a flag in a string, or a flag as 0/1: the document's types, exactly.
        (
            "candidates",
            {"candidates": [{"text": "t", "confidence": "0.5"}]},
            "candidates.0.confidence",
        ),
        (
            "candidates",
            {"candidates": [{"text": "t", "stated_change": 1}]},
            "candidates.0.stated_change",
        ),
        ("review/r-1", {"action": "maybe"}, "action"),
    ],
)
def test_bad_writes_are_a_422_naming_the_field(
    api: str, path: str, body: object, field: str
) -> None:
    answer = _post(api, f"/v1/subjects/ana/{path}", body)
    assert answer.status_code == 422, answer.text
    said = answer.json()
    assert (said["field"] or "").startswith(field) or field in said["message"], said


def test_a_body_over_the_limit_is_refused_before_it_is_read(api: str) -> None:
    huge = b'{"text": "' + b"x" * (5 * 1024 * 1024) + b'"}'
    declared = httpx.post(f"{api}/v1/subjects/ana/observations", content=huge, timeout=30,
                          headers={"content-type": "application/json"})  # fmt: skip
    assert declared.status_code == 413, declared.text

    def chunks() -> Iterator[bytes]:
        for _ in range(6):
            yield b"x" * (1024 * 1024)

    streamed = httpx.post(f"{api}/v1/subjects/ana/observations", content=chunks(), timeout=30,
                          headers={"content-type": "application/json"})  # fmt: skip
    assert streamed.status_code == 413
    assert _post(api, "/v1/subjects/ana/observations", "not an object").status_code == 422


def test_the_client_erases_forgets_and_restores_as_the_api_does(
    written: str, served: tuple[Settings, Seeded]
) -> None:
    subject = _subject()
    imported = {"candidates": [{"attribute": "employer", "value": "Acme", "text": "At Acme."}]}
    assert _post(written, f"/v1/subjects/{subject}/candidates", imported, wait=30).is_success
    with Client(served[0]) as memory:
        attested = memory.erase(subject, attribute="employer", timeout=60)
        assert isinstance(attested, ErasureAttestation) and attested.verified
        assert memory.facts(subject) == []
        forgot = memory.forget(subject)
        restored = memory.restore(subject, "f-archived")
        with pytest.raises(InvalidRequest, match="not both"):
            memory.erase(subject, fact_id="f", attribute="a")
    assert (forgot.command, restored.command, restored.fact_id) == (
        "forget",
        "restore",
        "f-archived",
    )


def test_slotwise_search_finds_the_subjects_facts_only(served: tuple[Settings, Seeded]) -> None:
    env = {**os.environ, **served[0].to_env()}
    found = subprocess.run(
        [sys.executable, "-m", "slotwise.streams", "search", "ana", "where does the user work",
         "--k", "5", "--json"],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    hits = [json.loads(line) for line in found.stdout.splitlines()]
    assert hits and {h["fact"]["subject_id"] for h in hits} == {"ana"}
    assert {h["fact"]["value"] for h in hits} <= {"Datadog", "Stripe"}
    refused = subprocess.run(
        [sys.executable, "-m", "slotwise.streams", "search", "ana", "x", "--k", "0"],
        capture_output=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode == 2


def test_reads_searches_and_writes_are_genai_memory_spans(
    written: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(telemetry, "_TRACER", provider.get_tracer("slotwise.memory"))
    subject = _subject()
    base = f"{written}/v1/subjects/{subject}"
    assert _post(written, f"/v1/subjects/{subject}/observations", {"text": "I work at Acme."},
                 wait=30).status_code == 200  # fmt: skip
    assert httpx.get(f"{base}/facts", timeout=30).status_code == 200
    assert httpx.get(f"{base}/search", params={"q": "work"}, timeout=60).status_code == 200
    assert _post(written, f"/v1/subjects/{subject}/erase", {"fact_id": "f-1"}).status_code == 202
    spans = [(s.name, dict(s.attributes or {})) for s in exporter.get_finished_spans()]
    assert [name for name, _ in spans] == [
        "update_memory", "search_memory", "search_memory", "delete_memory",
    ]  # fmt: skip
    for name, attributes in spans:
        assert attributes["gen_ai.operation.name"] == name
        assert attributes["gen_ai.provider.name"] == "slotwise"
        assert attributes["gen_ai.memory.store.id"] == subject
    assert spans[0][1]["gen_ai.memory.record.count"] == 1
    assert spans[1][1]["gen_ai.memory.record.count"] == 1
    assert spans[3][1]["gen_ai.memory.record.id"] == "f-1"
