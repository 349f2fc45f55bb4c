"""The ``slotwise`` command: a thin root that mounts each area's sub-commands."""

from __future__ import annotations

import typer

from streams.cli_read import facts, produce, tail, wait
from streams.cli_run import demo, worker
from streams.stack_cli import stack_app, topics_app

__all__ = ["app"]

app = typer.Typer(
    name="slotwise",
    help="A streaming write pipeline that keeps an AI agent's long-term memory true.",
    no_args_is_help=True,
)
app.add_typer(stack_app, name="stack")
app.add_typer(topics_app, name="topics")
for command in (demo, worker, facts, tail, produce, wait):
    app.command()(command)
