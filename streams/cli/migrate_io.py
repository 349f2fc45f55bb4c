"""What every ``slotwise migrate`` command shares: consoles, progress bars, the client, refusals."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from pymilvus import MilvusClient
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from slotwise.sinks.milvus.collections import GRPC_OPTIONS
from slotwise.streams.config import Settings
from slotwise.topics.exceptions import SlotwiseError

__all__ = ["err", "milvus", "out", "progress", "refusals"]

out = Console()
err = Console(stderr=True)


def progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )


def milvus(settings: Settings) -> MilvusClient:
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else ""
    return MilvusClient(uri=settings.milvus_uri, token=token, grpc_options=GRPC_OPTIONS)


@contextmanager
def refusals() -> Iterator[None]:
    """A refused step is a message and exit 1, not a traceback."""
    try:
        yield
    except SlotwiseError as exc:
        err.print(f"[red]refused:[/] {exc}")
        raise typer.Exit(1) from exc
