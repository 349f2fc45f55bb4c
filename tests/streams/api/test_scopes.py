"""Scoped tokens: every route of the OpenAPI document walked with a token outside its scope
is a 403; the CLI prints a token once and stores only its hash; loopback without a token
and ``SLOTWISE_API_TOKEN`` behave as before."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis

from slotwise.sinks.redis.tokens import Grant, TokenStore
from slotwise.streams.config import Settings
from slotwise.streams.read.store import open_store
from tests.streams.api.conftest import TOKEN
from tests.streams.api.server import Seeded, ServerThread

pytestmark = [pytest.mark.redis, pytest.mark.kafka, pytest.mark.milvus]

# A valid body for each write, so a 403 is the scope's answer and not a 422 in disguise.
BODIES: dict[str, Any] = {
    "observations": {"text": "I work at Acme."},
    "candidates": {"candidates": [{"text": "User works at Acme."}]},
    "erase": {"attribute": "employer"},
    "forget": {},
    "restore": {"subject_id": "ana"},
    "{review_id}": {"action": "reject"},
}


def test_a_grant_reaches_what_it_names_and_nothing_else() -> None:
    prefix = Grant.parse("tenant-a/", "read,write")
    assert prefix.allows("read", "tenant-a/u1") and prefix.allows("write", "tenant-a/")
    assert not prefix.allows("read", "tenant-b/u1") and not prefix.allows("erase", "tenant-a/u")
    assert not prefix.allows("read", None)  # an all-subjects action
    exact = Grant.parse("=user-42", "review")
    assert exact.allows("review", "user-42") and not exact.allows("review", "user-420")
    assert exact.single_subject == "user-42"
    every = Grant.parse("*", "read")
    assert every.allows("read", "anyone") and every.allows("read", None)
    assert Grant.decode(prefix.encode()) == prefix
    for subjects, scopes in (("x", "admin"), ("x", ""), ("  ", "read")):
        with pytest.raises(ValueError, match=r"scopes|subjects"):
            Grant.parse(subjects, scopes)


def _tokens(settings: Settings, *grants: Grant) -> list[str]:
    async def run() -> list[str]:
        store = open_store(settings)
        try:
            tokens = TokenStore(store, prefix=settings.redis_prefix)
            return [await tokens.create(g) for g in grants]
        finally:
            await store.close()

    return asyncio.run(run())


@pytest.fixture(scope="module")
def scoped(served: tuple[Settings, Seeded]) -> Iterator[tuple[str, Settings]]:
    """A server that requires a token (as off loopback), beside SLOTWISE_API_TOKEN."""
    server = ServerThread(served[0], token=TOKEN, max_wait_s=0.2).start()
    yield server.url, served[0]
    server.stop()


def _walk(base: str, token: str, subject: str) -> dict[str, int]:
    """Every operation of the document, on ``subject``, with ``token``: its status."""
    headers = {"Authorization": f"Bearer {token}"}
    document = httpx.get(f"{base}/openapi.json", headers=headers, timeout=30).json()
    seen = {}
    for path, operations in document["paths"].items():
        for method in operations:
            url = base + path.format(
                subject_id=subject, review_id="r-1", fact_id="f-1", name="fact"
            )
            params = {"q": "where"} if path.endswith("/search") else {}
            body = BODIES.get(path.rsplit("/", 1)[-1])
            answer = httpx.request(method, url, headers=headers, params=params, json=body,
                                   timeout=30)  # fmt: skip
            seen[f"{method.upper()} {path}"] = answer.status_code
    return seen


def test_every_route_walked_with_an_out_of_scope_token_is_refused(
    scoped: tuple[str, Settings],
) -> None:
    base, settings = scoped
    (bob_only,) = _tokens(settings, Grant.parse("=bob", "read,write,erase,review"))
    seen = _walk(base, bob_only, "ana")
    subject_routes = {k: v for k, v in seen.items() if "{subject_id}" in k or "restore" in k}
    assert len(subject_routes) >= 11, seen
    assert set(subject_routes.values()) == {403}, subject_routes
    # What concerns no subject is open to any known token.
    assert {v for k, v in seen.items() if k not in subject_routes} == {200}, seen


def test_a_read_token_reads_its_subjects_and_writes_nothing(scoped: tuple[str, Settings]) -> None:
    base, settings = scoped
    (reader,) = _tokens(settings, Grant.parse("an", "read"))
    seen = _walk(base, reader, "ana")
    for route, status in seen.items():
        wanted = 200 if route.startswith("GET") else 403
        assert status == wanted, (route, status)


def test_unknown_and_revoked_tokens_are_401_and_the_cli_stores_only_a_hash(
    scoped: tuple[str, Settings],
) -> None:
    base, settings = scoped
    env = {**os.environ, **settings.to_env()}
    created = subprocess.run(
        [sys.executable, "-m", "slotwise.streams", "token", "create",
         "--subjects", "ana", "--scopes", "read,write"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    token = created.stdout.strip()
    assert token and token not in created.stderr
    client = redis.Redis.from_url(settings.redis_url)
    stored = client.hgetall(f"{settings.redis_prefix}:tokens")
    client.close()
    digest = hashlib.sha256(token.encode()).hexdigest()
    assert digest.encode() in stored
    assert not any(token.encode() in k + v for k, v in stored.items())

    facts = f"{base}/v1/subjects/ana/facts"
    assert httpx.get(facts, headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert httpx.get(facts, headers={"Authorization": "Bearer swt_nope"}).status_code == 401
    listed = subprocess.run(
        [sys.executable, "-m", "slotwise.streams", "token", "list", "--json"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    assert digest in listed.stdout and token not in listed.stdout
    subprocess.run(
        [sys.executable, "-m", "slotwise.streams", "token", "revoke", digest[:12]],
        capture_output=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    assert httpx.get(facts, headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_loopback_without_a_token_is_open_and_an_offered_token_still_binds(
    api: str, served: tuple[Settings, Seeded]
) -> None:
    assert httpx.get(f"{api}/v1/subjects/ana/facts").status_code == 200
    (bob_only,) = _tokens(served[0], Grant.parse("=bob", "read"))
    headers = {"Authorization": f"Bearer {bob_only}"}
    assert httpx.get(f"{api}/v1/subjects/ana/facts", headers=headers).status_code == 403
    assert httpx.get(f"{api}/v1/subjects/bob/facts", headers=headers).status_code == 200
    assert httpx.get(f"{api}/inspector", headers=headers).status_code == 403
