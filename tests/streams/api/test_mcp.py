"""``slotwise mcp`` driven by the SDK's own client, over stdio and over streamable HTTP,
against a real worker: every tool, the resource, a cross-subject attempt refused, and a
malformed call answered with a tool error."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from slotwise.sinks.redis.tokens import Grant, TokenStore
from slotwise.streams.config import Settings
from slotwise.streams.dev.testing import WorkerProcess, free_port
from slotwise.streams.read.store import open_store
from tests.streams.api.server import Seeded

pytestmark = [pytest.mark.redis, pytest.mark.kafka, pytest.mark.milvus]

TOOLS = {
    "add_memory",
    "search_memories",
    "get_facts",
    "delete_memory",
    "list_reviews",
    "resolve_review",
}


def _env(settings: Settings) -> dict[str, str]:
    return {**os.environ, **settings.to_env()}


def _structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return result.structured_content  # type: ignore[no-any-return]


async def _exercise(client: Client, subject: str) -> None:
    """Every tool and the resource, as an agent would use them, for ``subject``."""
    listed = await client.list_tools()
    assert {t.name for t in listed.tools} == TOOLS
    assert all(t.description and t.input_schema for t in listed.tools)
    assert all("subject" not in json.dumps(t.input_schema) for t in listed.tools)

    added = _structured(
        await client.call_tool("add_memory", {"text": "I work at Datadog.", "wait": True})
    )
    assert added["applied"] and [d["decision"] for d in added["decisions"]] == ["ADD"]
    assert [f["value"] for f in added["facts"]] == ["Datadog"]
    moved = _structured(
        await client.call_tool("add_memory", {"text": "I now work at Stripe.", "wait": True})
    )
    assert moved["applied"], moved

    facts = _structured(await client.call_tool("get_facts", {"attribute": "employer"}))
    assert [f["value"] for f in facts["facts"]] == ["Stripe"]
    history = _structured(await client.call_tool("get_facts", {"history": True}))
    assert {f["value"] for f in history["facts"]} >= {"Datadog", "Stripe"}
    hits: list[dict[str, Any]] = []
    for _ in range(40):  # searchable once the worker's commit has flushed the vector
        hits = _structured(
            await client.call_tool("search_memories", {"query": "where do they work", "k": 3})
        )["hits"]
        if hits:
            break
        await asyncio.sleep(0.5)
    assert hits and hits[0]["value"] == "Stripe"

    pinned = await client.read_resource("memory://facts/current")
    assert [f["value"] for f in json.loads(pinned.contents[0].text)["facts"]] == ["Stripe"]

    assert _structured(await client.call_tool("list_reviews", {})) == {"items": []}
    unknown = await client.call_tool("resolve_review", {"review_id": "r-x", "action": "accept"})
    assert unknown.is_error and "no review item" in unknown.content[0].text
    malformed = await client.call_tool("search_memories", {"query": "x", "k": "lots"})
    assert malformed.is_error
    both = await client.call_tool("delete_memory", {"fact_id": "f", "attribute": "employer"})
    assert both.is_error and "exactly one" in both.content[0].text

    deleted = _structured(await client.call_tool("delete_memory", {"attribute": "employer"}))
    assert deleted["attestation"]["verified"] and deleted["subject_id"] == subject
    gone = _structured(await client.call_tool("get_facts", {"attribute": "employer"}))
    assert gone["facts"] == []


def test_over_stdio_every_tool_works_for_the_configured_subject(
    served: tuple[Settings, Seeded], worker: WorkerProcess
) -> None:
    subject = f"m-{uuid.uuid4().hex[:8]}"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "slotwise.streams", "mcp", "--subject", subject],
        env=_env(served[0]),
    )

    async def run() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            await _exercise(client, subject)
            # An injected subject argument has nowhere to go: it reads the bound subject.
            other = await client.call_tool("get_facts", {"subject_id": "ana"})
            assert other.is_error or all(
                f["value"] != "Stripe" for f in other.structured_content["facts"]
            )
            assert "Datadog" not in json.dumps(other.structured_content or {})

    asyncio.run(run())


@pytest.fixture(scope="module")
def mcp_http(served: tuple[Settings, Seeded], worker: WorkerProcess) -> Iterator[str]:
    port = free_port()
    log = Path(worker.log_path).with_name("mcp.log")
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "slotwise.streams", "mcp", "--transport", "http",
             "--port", str(port)],
            env=_env(served[0]), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(url, timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(30)


def _token(settings: Settings, grant: Grant) -> str:
    async def run() -> str:
        store = open_store(settings)
        try:
            return await TokenStore(store, prefix=settings.redis_prefix).create(grant)
        finally:
            await store.close()

    return asyncio.run(run())


@asynccontextmanager
async def _http_client(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, read_timeout_seconds=120) as client:
            yield client


def test_over_http_the_token_binds_the_subject_and_nothing_crosses(
    served: tuple[Settings, Seeded], mcp_http: str
) -> None:
    settings = served[0]
    subject = f"m-{uuid.uuid4().hex[:8]}"
    mine = _token(settings, Grant.parse(f"={subject}", "read,write,erase,review"))
    reader = _token(settings, Grant.parse("b", "read"))

    async def run() -> None:
        async with _http_client(mcp_http, {"Authorization": f"Bearer {mine}"}) as client:
            await _exercise(client, subject)
        # The same token, a header naming someone else: refused, not redirected.
        crossing = {"Authorization": f"Bearer {mine}", "X-Slotwise-Subject": "ana"}
        async with _http_client(mcp_http, crossing) as client:
            refused = await client.call_tool("get_facts", {})
            assert refused.is_error and "does not reach" in refused.content[0].text
        # A read-only token over several subjects: reads the one it names, writes nothing.
        named = {"Authorization": f"Bearer {reader}", "X-Slotwise-Subject": "bob"}
        async with _http_client(mcp_http, named) as client:
            facts = _structured(await client.call_tool("get_facts", {}))
            assert [f["value"] for f in facts["facts"]] == ["Acme"]
            write = await client.call_tool("add_memory", {"text": "I live in Rome."})
            assert write.is_error and "'write'" in write.content[0].text
        async with _http_client(mcp_http, {}) as client:
            anonymous = await client.call_tool("get_facts", {})
            assert anonymous.is_error and "bearer token" in anonymous.content[0].text

    asyncio.run(run())
