"""The ``slotwise`` command: a thin root that mounts each area's sub-commands."""

from __future__ import annotations

import typer

from streams.stack_cli import stack_app, topics_app

__all__ = ["app"]

app = typer.Typer(
    name="slotwise",
    help="A streaming write pipeline that keeps an AI agent's long-term memory true.",
    no_args_is_help=True,
)
app.add_typer(stack_app, name="stack")
app.add_typer(topics_app, name="topics")
