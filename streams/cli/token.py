"""``slotwise token create | list | revoke``: scoped API and MCP tokens.

``create`` prints the new token once, on stdout alone (so a script can capture
it), and stores only its SHA-256 with what it reaches, in the deployment's
Redis (``sinks/redis/tokens.py``), where every ``slotwise serve`` and
``slotwise mcp`` of the deployment reads it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

import typer
from rich.console import Console

from slotwise.sinks.exceptions import SinkError
from slotwise.sinks.redis.tokens import Grant, TokenStore
from slotwise.streams.config import Settings
from slotwise.streams.read.store import open_store

__all__ = ["token_app"]

token_app = typer.Typer(help="Scoped tokens for the HTTP API and MCP.", no_args_is_help=True)
_out = Console()
_err = Console(stderr=True)
T = TypeVar("T")


def _with_tokens(use: Callable[[TokenStore], Awaitable[T]]) -> T:
    settings = Settings()

    async def run() -> T:
        store = open_store(settings)
        try:
            return await use(TokenStore(store, prefix=settings.redis_prefix))
        finally:
            await store.close()

    try:
        return asyncio.run(run())
    except SinkError as exc:
        _err.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None


@token_app.command("create")
def create(
    subjects: Annotated[
        str,
        typer.Option(
            "--subjects",
            help="The subjects it reaches: a prefix (user-42, tenant-a/), =ID for one id "
            "exactly, or * for every subject.",
        ),
    ],
    scopes: Annotated[
        str, typer.Option("--scopes", help="Comma-separated: read, write, erase, review.")
    ] = "read",
    note: Annotated[str, typer.Option("--note", help="Who or what it is for.")] = "",
) -> None:
    """Create a token; it is printed once and only its hash is kept."""
    try:
        grant = Grant.parse(subjects, scopes, note)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    token = _with_tokens(lambda tokens: tokens.create(grant))
    sys.stdout.write(token + "\n")
    _err.print(f"token for {grant.describe()} (shown once; only its hash is stored)")


@token_app.command("list")
def list_tokens(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """The tokens (by the first characters of their hash) and what each reaches."""
    found = _with_tokens(lambda tokens: tokens.list())
    for token_id, grant in found.items():
        if as_json:
            line = {
                "token_id": token_id,
                "match": grant.match,
                "subjects": grant.subjects,
                "scopes": sorted(grant.scopes),
                "note": grant.note,
                "created_at": grant.created_at,
            }
            sys.stdout.write(json.dumps(line) + "\n")
        else:
            _out.print(f"{token_id[:12]}  {grant.describe()}  {grant.created_at}  {grant.note}")


@token_app.command("revoke")
def revoke(
    token_id: Annotated[str, typer.Argument(help="The token's id (8+ characters, from list).")],
) -> None:
    """Revoke a token: every server refuses it from its next request."""
    try:
        gone = _with_tokens(lambda tokens: tokens.revoke(token_id))
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if not gone:
        _err.print(f"[red]no token {token_id}[/]")
        raise typer.Exit(1)
    _err.print(f"revoked {gone} token(s)")
