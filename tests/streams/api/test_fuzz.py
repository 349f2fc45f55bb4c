"""The API fuzzed from its own OpenAPI document (schemathesis): never a 5xx, never another
subject's data, responses as documented; bad input is a 4xx that says why.

Driven through ``schema.as_strategy()`` and Hypothesis directly: schemathesis's pytest
plugin does not run under this pytest.
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import unquote

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import Case, GenerationMode

from tests.streams.api.conftest import TOKEN

pytestmark = [pytest.mark.redis, pytest.mark.kafka, pytest.mark.milvus, pytest.mark.slow]

EXAMPLES = 300


def one_subject(ctx: Any, response: Any, case: Case) -> None:
    """A response about the subject in the path holds nothing of any other subject."""
    encoded = (case.path_parameters or {}).get("subject_id")
    if encoded is None or response.status_code != 200:
        return
    subject = unquote(encoded)
    body = response.json()
    assert body["subject_id"] == subject, "a response about another subject"
    written = body.get("written", [])
    records = [
        *body.get("facts", []),
        *(f for w in written for f in w["facts"] + w["supersessions"] + w["review"]),
        *(hit["fact"] for hit in body.get("hits", [])),
        *body.get("supersessions", []),
        *body.get("items", []),
        *body.get("attestations", []),
    ]
    assert all(record["subject_id"] == subject for record in records), "another subject's data"


def explains(ctx: Any, response: Any, case: Case) -> None:
    """Every refusal is JSON naming the error and saying why."""
    if 400 <= response.status_code < 500:
        body = response.json()
        assert body["error"] and body["message"], body


def _fuzz(base: str, mode: GenerationMode, headers: dict[str, str]) -> Counter[str]:
    schema = schemathesis.openapi.from_url(f"{base}/openapi.json", headers=headers)
    seen: Counter[str] = Counter()

    @given(case=schema.as_strategy(mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Case) -> None:
        response = case.call_and_validate(
            headers=headers, additional_checks=[one_subject, explains]
        )
        seen[f"{case.method} {case.path} {response.status_code}"] += 1

    run()
    return seen


def _report(name: str, seen: Counter[str]) -> None:
    by_status: Counter[int] = Counter()
    for key, n in seen.items():
        by_status[int(key.rsplit(" ", 1)[1])] += n
    routes = {key.rsplit(" ", 1)[0] for key in seen}
    print(
        f"{name}: {len(routes)} routes, {sum(seen.values())} cases, "
        f"by status {dict(sorted(by_status.items()))}"
    )
    assert not [s for s in by_status if s >= 500]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_api_holds_under_generated_requests(api: str, mode: GenerationMode) -> None:
    _report(f"open server, {mode.value}", _fuzz(api, mode, {}))


def test_the_token_protected_api_holds_too(guarded_api: str) -> None:
    _report("token server", _fuzz(guarded_api, GenerationMode.POSITIVE,
                                  {"Authorization": f"Bearer {TOKEN}"}))  # fmt: skip
