"""``slotwise stack …`` and ``slotwise topics …``: bring up the local services and the topics."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from slotwise.sinks.kafka.admin import TopicAdminError, ensure_topics
from slotwise.streams.config import Settings
from slotwise.streams.dev.security import ROLES, Role
from slotwise.streams.dev.stack import (
    MilvusEngine,
    ServiceChange,
    ServiceStatus,
    Stack,
    StackError,
)
from slotwise.topics.catalogue import Catalogue

__all__ = ["stack_app", "topics_app"]

stack_app = typer.Typer(
    help="Run the local Kafka (one broker or three), Redis and Milvus (Lite or a server) services.",
    no_args_is_help=True,
)
topics_app = typer.Typer(help="Administer the catalogue's Kafka topics.", no_args_is_help=True)

_out = Console()
_err = Console(stderr=True)

DataDir = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        help="Where services keep data, pid and log files [default: $SLOTWISE_DATA_DIR or "
        "~/.local/share/slotwise].",
        file_okay=False,
    ),
]


def _fail(what: str, error: Exception) -> None:
    # The message may hold brackets and long paths: print it verbatim, unwrapped.
    _err.print(Text.assemble((f"{what}: ", "bold red"), str(error)), soft_wrap=True)


MilvusFlag = Annotated[
    MilvusEngine | None,
    typer.Option(
        "--milvus",
        help="Which Milvus to start when none answers: lite (Milvus Lite, the default) or "
        "server (the Milvus 2.3 standalone server from PyPI's milvus package) "
        "[default: $SLOTWISE_STACK_MILVUS or lite].",
        case_sensitive=False,
    ),
]


SecureFlag = Annotated[
    bool,
    typer.Option(
        "--secure",
        help="Kafka on SASL_SSL (SCRAM-SHA-512) with ACLs per principal, Redis on TLS with "
        "ACL users, a Milvus server with a token; credentials: `slotwise stack env --role`. "
        "A data dir brought up secure stays secure.",
    ),
]


BrokersFlag = Annotated[
    int | None,
    typer.Option(
        "--brokers",
        help="How many Kafka brokers to start when none answers: 1, or 3 for a KRaft cluster "
        "(three broker+controller nodes from the bootstrap port on, every second port; topics "
        "at replication factor 3, min.insync.replicas=2) [default: what this data dir runs, "
        "else 1].",
        min=1,
    ),
]


def _stack(
    data_dir: Path | None,
    milvus: MilvusEngine | None = None,
    *,
    secure: bool = False,
    brokers: int | None = None,
) -> Stack:
    return Stack(Settings(), data_dir, milvus=milvus, secure=secure, brokers=brokers)


def _show(stack: Stack, rows: tuple[ServiceStatus, ...], actions: tuple[str, ...] = ()) -> None:
    table = Table(
        "service", "address", "engine", "pid", "health", *(("action",) if actions else ())
    )
    for i, s in enumerate(rows):
        health = "[green]healthy[/]" if s.healthy else "[red]down[/]"
        engine = s.engine or "-"
        table.add_row(s.name, s.address, engine, s.owner, health, *actions[i : i + 1])
    _out.print(table)
    _out.print(f"data, pid and log files: {stack.data_dir}/<service>/", soft_wrap=True)
    if stack.brokers > 1:
        # A client given one broker cannot start while that one is down.
        _out.print(f"export SLOTWISE_KAFKA_BOOTSTRAP={stack.kafka_bootstrap}", soft_wrap=True)


def _show_changes(stack: Stack, changes: tuple[ServiceChange, ...]) -> None:
    _show(stack, tuple(c.status for c in changes), tuple(c.action for c in changes))


@stack_app.command()
def up(
    data_dir: DataDir = None,
    milvus: MilvusFlag = None,
    secure: SecureFlag = False,
    brokers: BrokersFlag = None,
) -> None:
    """Start what is not running (reusing whatever already answers) and wait until healthy."""
    try:
        stack = _stack(data_dir, milvus, secure=secure, brokers=brokers)
        _show_changes(stack, stack.up())
    except StackError as exc:
        _fail("stack up failed", exc)
        raise typer.Exit(1) from None
    if stack.security is not None:
        _out.print(
            'secure: eval "$(slotwise stack env --role ROLE)" with ROLE one of '
            f"{', '.join(ROLES)} (deploy/local/README.md)",
            soft_wrap=True,
        )
        if stack.milvus_engine == "lite":
            _out.print("Milvus Lite has no authentication: --milvus server has a token.")


@stack_app.command()
def env(
    role: Annotated[
        Role, typer.Option("--role", help="Whose credentials: " + ", ".join(ROLES) + ".")
    ],
    data_dir: DataDir = None,
) -> None:
    """Print the `export SLOTWISE_…` lines of one role against the secure stack."""
    try:
        variables = _stack(data_dir).role_env(role)
    except StackError as exc:
        _fail("stack env failed", exc)
        raise typer.Exit(1) from None
    for name, value in variables.items():
        print(f"export {name}={shlex.quote(value)}")


@stack_app.command()
def down(data_dir: DataDir = None) -> None:
    """Stop the services this data dir started; leave others alone."""
    try:
        stack = _stack(data_dir)
        _show_changes(stack, stack.down())
    except StackError as exc:
        _fail("stack down failed", exc)
        raise typer.Exit(1) from None


@stack_app.command()
def status(data_dir: DataDir = None) -> None:
    """Show each service's address, pid and health; exit 1 when one is down."""
    try:
        stack = _stack(data_dir)
        rows = stack.status()
    except StackError as exc:
        _fail("stack status failed", exc)
        raise typer.Exit(1) from None
    _show(stack, rows)
    if not all(s.healthy for s in rows):
        raise typer.Exit(1)


@topics_app.command()
def create(
    prefix: Annotated[
        str | None, typer.Option(help="Topic name prefix [default: settings].")
    ] = None,
    partitions: Annotated[
        int | None, typer.Option(min=1, help="Partitions per topic [default: settings].")
    ] = None,
) -> None:
    """Create the catalogue's missing topics; an existing one is left as it is."""
    settings = Settings()
    catalogue = Catalogue(
        prefix=prefix or settings.topic_prefix, partitions=partitions or settings.partitions
    )
    try:
        result = ensure_topics(settings.librdkafka(), catalogue, settings.replication_factor)
    except TopicAdminError as exc:
        _fail("topics create refused", exc)
        raise typer.Exit(1) from None
    for name in result.created:
        _out.print(f"created {name}")
    _out.print(result.summary())
