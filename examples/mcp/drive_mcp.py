"""Drive ``slotwise mcp`` with the MCP SDK's own client, as an agent framework would: list
the tools, remember a turn, search, and pin the current facts.

    python examples/mcp/drive_mcp.py --subject user-42 "I live in Lisbon." "where do they live"

It starts ``slotwise mcp --subject`` over stdio with this process's ``SLOTWISE_*``
environment; ``--url`` (and ``SLOTWISE_TOKEN``) talk to ``slotwise mcp --transport http``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


async def drive(client: Client, said: str, query: str) -> None:
    tools = await client.list_tools()
    print("tools:", ", ".join(sorted(t.name for t in tools.tools)))
    added = await client.call_tool("add_memory", {"text": said, "wait": True})
    print("add_memory:", json.dumps(added.structured_content))
    found = await client.call_tool("search_memories", {"query": query, "k": 3})
    print("search_memories:", json.dumps(found.structured_content))
    pinned = await client.read_resource("memory://facts/current")
    print("memory://facts/current:", pinned.contents[0].text)  # type: ignore[union-attr]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subject", help="stdio: the subject the server is bound to.")
    parser.add_argument("--url", help="http: the server's /mcp URL (subject from the token).")
    parser.add_argument("said")
    parser.add_argument("query")
    args = parser.parse_args()
    if not args.url and not args.subject:
        parser.error("give --subject (stdio) or --url (http)")
    server: Any
    if args.url:
        token = os.environ.get("SLOTWISE_TOKEN", "")
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
        server = streamable_http_client(args.url, http_client=http)
    else:
        server = StdioServerParameters(
            command=sys.executable,
            args=["-m", "slotwise.streams", "mcp", "--subject", args.subject],
            env=dict(os.environ),
        )
    async with Client(server, read_timeout_seconds=120) as client:
        await drive(client, args.said, args.query)


if __name__ == "__main__":
    asyncio.run(main())
