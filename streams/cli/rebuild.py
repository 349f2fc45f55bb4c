"""``slotwise rebuild``: Redis and Milvus put back from the compacted facts topic, or checked
against it (``--verify``); see ``streams/rebuild/from_log.py`` and ``streams/rebuild/verify.py``."""

from __future__ import annotations

import asyncio
import sys
from contextlib import AsyncExitStack
from typing import Annotated

import typer
from rich.console import Console

from slotwise.streams.config import Settings
from slotwise.streams.rebuild.from_log import FactsLog, Rebuild, RebuildRefused, open_rebuild_stores
from slotwise.streams.rebuild.verify import verify as verify_store
from slotwise.topics.codec import dumps

__all__ = ["rebuild"]

_out = Console()
_err = Console(stderr=True)


def rebuild(
    subjects: Annotated[
        list[str] | None,
        typer.Option("--subject", help="Rebuild (or verify) this subject only (repeatable)."),
    ] = None,
    every_subject: Annotated[bool, typer.Option("--all", help="Every subject of the log.")] = False,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Write nothing: compare the store, fact by fact, with what the log rebuilds; "
            "exit 1 on any difference.",
        ),
    ] = False,
    batch: Annotated[int, typer.Option("--batch", min=1, help="Log records per batch.")] = 1000,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """Rebuild Redis state and Milvus rows from the compacted facts topic (resumable)."""
    if bool(subjects) == every_subject:
        raise typer.BadParameter("give --subject S or --all (--subject repeats)")
    settings = Settings()
    scopes: list[str | None] = list(subjects) if subjects else [None]

    async def main() -> int:
        worst = 0
        for subject in scopes:
            worst = max(worst, await one(subject))
        return worst

    async def one(subject: str | None) -> int:
        async with AsyncExitStack() as stack:
            stores = await open_rebuild_stores(settings, stack)
            log = FactsLog(settings, batch_size=batch)
            stack.callback(log.close)
            if verify:
                differences = await verify_store(stores, log, subject_id=subject)
                _emit(
                    {"differences": [d.line() for d in differences], "count": len(differences)},
                    as_json,
                    lines=[d.line() for d in differences] + [f"{len(differences)} differences"],
                )
                return 1 if differences else 0
            try:
                report = await Rebuild(stores, log, subject_id=subject).run()
            except RebuildRefused as exc:
                _err.print(f"[red]{exc}[/red]")
                return 2
            _emit(
                report.as_dict(),
                as_json,
                lines=[f"{k:>14}  {v}" for k, v in report.as_dict().items()],
            )
            return 0

    raise typer.Exit(asyncio.run(main()))


def _emit(report: dict[str, object], as_json: bool, *, lines: list[str]) -> None:
    if as_json:
        sys.stdout.write(dumps(report).decode() + "\n")
        sys.stdout.flush()
        return
    for line in lines:
        _out.print(line, highlight=False, markup=False)
