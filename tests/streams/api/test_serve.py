"""The HTTP read API on a real server: one subject per response, the token, the bind rule."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from urllib.parse import quote

import httpx
import pytest
from confluent_kafka import Producer

from slotwise.streams.api.serve import ServeRefused, check_bind
from slotwise.streams.config import Settings
from slotwise.topics.codec import encode_record
from slotwise.topics.records import CandidateFact, ReviewItem
from tests.streams.api.conftest import SUBJECTS, TOKEN
from tests.streams.api.server import Seeded, ServerThread

pytestmark = [pytest.mark.redis, pytest.mark.kafka, pytest.mark.milvus]


def _get(base: str, path: str, **kwargs: object) -> httpx.Response:
    return httpx.get(base + path, timeout=30, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("subject", list(SUBJECTS))
def test_facts_and_search_concern_the_subject_in_the_path_only(api: str, subject: str) -> None:
    path = f"/v1/subjects/{quote(subject, safe='')}"
    current = _get(api, f"{path}/facts").json()
    assert current["subject_id"] == subject
    assert [f["value"] for f in current["facts"]] == SUBJECTS[subject][-1:]
    history = _get(api, f"{path}/facts", params={"history": "true"}).json()
    assert sorted(f["value"] for f in history["facts"]) == sorted(SUBJECTS[subject])
    hits = _get(api, f"{path}/search", params={"q": "where does the user work", "k": 50})
    assert hits.status_code == 200, hits.text
    found = hits.json()["hits"]
    assert found and {h["fact"]["subject_id"] for h in found} == {subject}


def test_as_of_believed_at_and_read_your_writes(api: str, served: tuple[Settings, Seeded]) -> None:
    facts = "/v1/subjects/ana/facts"
    assert _get(api, facts, params={"believed_at": "2020-01-01T00:00:00Z"}).json()["facts"] == []
    assert _get(api, facts, params={"after_observation": "obs-ana"}).status_code == 200
    late = _get(api, facts, params={"after_observation": "never", "wait_s": 0.1})
    assert late.status_code == 409 and late.json()["field"] == "after_observation"


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/subjects/a%00b/facts", "subject_id"),
        ("/v1/subjects/%20%20/facts", "subject_id"),
        (f"/v1/subjects/{'x' * 300}/facts", "subject_id"),
        ("/v1/subjects/ana/facts?as_of=2026-03-01T00:00:00", "as_of"),
        ("/v1/subjects/ana/facts?as_of=yesterday", "as_of"),
        # Lax spellings a client sends by mistake: a Unix time, a float, a word for a bool.
        ("/v1/subjects/ana/facts?believed_at=0.0", "believed_at"),
        ("/v1/subjects/ana/facts?as_of=2026-03-01%2000:00:00Z", "as_of"),
        ("/v1/subjects/ana/facts?history=yes", "history"),
        ("/v1/subjects/ana/facts?include_archived=1", "include_archived"),
        ("/v1/subjects/ana/facts?after_observation=o&wait_s=%201", "wait_s"),
        ("/v1/subjects/ana/search?q=x&k=5.0", "k"),
        ("/v1/subjects/ana/supersessions?limit=5_0", "limit"),
        ("/v1/subjects/ana/search?q=", "q"),
        ("/v1/subjects/ana/search?q=x&k=51", "k"),
        ("/v1/subjects/ana/supersessions?limit=0", "limit"),
        ("/v1/schemas/nothing", "name"),
    ],
)
def test_bad_input_is_a_422_that_names_the_field(api: str, path: str, field: str) -> None:
    answer = _get(api, path)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field
    assert answer.json()["message"]


def test_the_logs_and_the_schemas(api: str) -> None:
    for kind, name in (("supersessions", "supersessions"), ("review", "items")):
        page = _get(api, f"/v1/subjects/ana/{kind}", params={"limit": 5}).json()
        assert page[name] == [] and page["complete"] is True
    assert _get(api, "/v1/schemas/fact").json()["$id"] == "urn:slotwise:schema:fact/1"
    assert _get(api, "/healthz").json() == {"healthy": True}
    assert "slotwise_vector_foreign_results_total" in _get(api, "/metrics").text
    assert "/v1/subjects/{subject_id}/facts" in _get(api, "/openapi.json").json()["paths"]


def test_a_token_protected_server_refuses_what_does_not_carry_the_token(guarded_api: str) -> None:
    facts = "/v1/subjects/ana/facts"
    assert _get(guarded_api, facts).status_code == 401
    assert _get(guarded_api, facts, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert _get(guarded_api, facts, headers={"Authorization": TOKEN}).status_code == 401
    assert _get(guarded_api, "/openapi.json").status_code == 401
    assert _get(guarded_api, "/inspector").status_code == 401
    good = _get(guarded_api, facts, headers={"Authorization": f"Bearer {TOKEN}"})
    assert good.status_code == 200
    assert _get(guarded_api, facts, cookies={"slotwise_token": TOKEN}).status_code == 200
    assert _get(guarded_api, "/healthz").status_code == 200  # probes need no token


def test_off_loopback_it_refuses_to_start_without_a_token() -> None:
    for host in ("0.0.0.0", "192.0.2.1", "example.internal", "::"):
        with pytest.raises(ServeRefused):
            check_bind(host, None)
        check_bind(host, TOKEN)
    for host in ("127.0.0.1", "localhost", "::1", "127.3.2.1"):
        check_bind(host, None)
    env = {k: v for k, v in os.environ.items() if k not in ("SLOTWISE_API_TOKEN", "PYTHONPATH")}
    refused = subprocess.run(
        [sys.executable, "-m", "slotwise.streams", "serve", "--host", "0.0.0.0"],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2
    assert b"SLOTWISE_API_TOKEN" in refused.stderr


class Decisions:
    """A review decider that only remembers (the review loop's seam)."""

    def __init__(self) -> None:
        self.made: list[tuple[str, str, str]] = []

    async def decide(
        self, subject_id: str, review_id: str, action: str, value: str | None = None
    ) -> str:
        self.made.append((subject_id, review_id, action))
        return f"decided-{len(self.made)}"


def test_the_page_is_read_only_unless_a_review_action_is_configured(
    api: str, served: tuple[Settings, Seeded]
) -> None:
    settings = served[0]
    item = ReviewItem(
        review_id="r-page",
        subject_id="bob",
        kind="high_stakes",
        reason="contradicts a verified email",
        candidate=CandidateFact(
            candidate_id="c-page",
            subject_id="bob",
            attribute="email",
            value="bob@new.example",
            text="User's email is bob@new.example.",
            observed_at=datetime(2026, 3, 1, tzinfo=UTC),
        ),
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    producer = Producer(settings.librdkafka())
    producer.produce(settings.catalogue().review, key=b"bob", value=encode_record(item))
    assert producer.flush(30) == 0

    page = _get(api, "/inspector/subjects/bob")
    assert page.status_code == 200 and "bob@new.example" in page.text
    assert "Accept" not in page.text
    assert _get(api, "/inspector/subjects/a%01b").status_code == 422

    decisions = Decisions()
    server = ServerThread(settings, review=decisions).start()
    try:
        page = _get(server.url, "/inspector/subjects/bob")
        assert "Accept" in page.text and "Reject" in page.text
        answer = httpx.post(
            f"{server.url}/inspector/subjects/bob/review/r-page",
            content=b"action=reject",
            headers={"content-type": "application/x-www-form-urlencoded"},
            timeout=30,
        )
        assert answer.status_code == 303
        api_answer = httpx.post(
            f"{server.url}/v1/subjects/bob/review/r-page", json={"action": "accept"}, timeout=30
        )
        assert api_answer.status_code == 202
    finally:
        server.stop()
    assert decisions.made == [("bob", "r-page", "reject"), ("bob", "r-page", "accept")]
