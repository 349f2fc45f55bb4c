"""``slotwise search S QUERY``: the subject's facts nearest a query in meaning.

It searches as the HTTP API's ``/search`` and the client's ``search`` do
(:meth:`~slotwise.streams.read.reads.Reads.search`), within the subject only.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import AsyncExitStack
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from slotwise.streams.config import Settings
from slotwise.streams.read.reads import MAX_K, FactQuery, ReadError, Reads, SearchHit

__all__ = ["search"]

_out = Console()
_err = Console(stderr=True)


def search(
    subject: Annotated[str, typer.Argument(help="The subject_id to search within.")],
    query: Annotated[str, typer.Argument(help="What to look for, in words.")],
    k: Annotated[int, typer.Option("--k", min=1, max=MAX_K, help="At most this many.")] = 5,
    include_archived: Annotated[
        bool, typer.Option("--include-archived", help="Also the cold tier's facts.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per hit: score and fact.")
    ] = False,
) -> None:
    """Show the subject's facts nearest QUERY in meaning, best first."""

    async def run() -> list[SearchHit]:
        async with AsyncExitStack() as stack:
            reads = Reads.open(Settings(), stack)
            scope = FactQuery(include_archived=include_archived)
            return await reads.search(subject, query, k=k, query=scope, via="cli")

    try:
        hits = asyncio.run(run())
    except ReadError as exc:
        _err.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None
    if as_json:
        for hit in hits:
            fact = hit.fact.model_dump(mode="json", by_alias=True)
            sys.stdout.write(json.dumps({"score": hit.score, "fact": fact}) + "\n")
        return
    table = Table(title=f"{len(hits)} fact(s) of {subject} nearest {query!r}")
    for column in ("score", "slot", "fact", "status"):
        table.add_column(column)
    for hit in hits:
        f = hit.fact
        value = f.text if f.value is None else str(f.value)
        table.add_row(f"{hit.score:.3f}", f.attribute or "·", value, f.status)
    _out.print(table)
