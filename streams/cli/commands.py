"""Every command group of ``slotwise``, mounted on the root in one place."""

from __future__ import annotations

import typer

from slotwise.streams.cli.consolidate import consolidate, reslot
from slotwise.streams.cli.docs import docs_app
from slotwise.streams.cli.erase import erase, erasures_app
from slotwise.streams.cli.evaluate import evaluate
from slotwise.streams.cli.forget import calibrate, forget, restore
from slotwise.streams.cli.mcp import mcp
from slotwise.streams.cli.migrate import migrate_app
from slotwise.streams.cli.read import facts, produce, tail, wait
from slotwise.streams.cli.rebuild import rebuild
from slotwise.streams.cli.review import review_app
from slotwise.streams.cli.run import demo, worker
from slotwise.streams.cli.search import search
from slotwise.streams.cli.serve import serve
from slotwise.streams.cli.stack import stack_app, topics_app
from slotwise.streams.cli.token import token_app

__all__ = ["mount"]


def mount(app: typer.Typer) -> None:
    """Add every command and group to ``app``."""
    app.add_typer(stack_app, name="stack")
    app.add_typer(topics_app, name="topics")
    app.add_typer(erasures_app, name="erasures")
    app.add_typer(review_app, name="review")
    app.add_typer(migrate_app, name="migrate")
    app.add_typer(token_app, name="token")
    for command in (demo, worker, facts, tail, produce, wait, serve, forget, restore, calibrate):
        app.command()(command)
    app.command("eval")(evaluate)
    app.command()(erase)
    app.command()(consolidate)
    app.command()(reslot)
    app.command()(rebuild)
    app.command()(search)
    app.command()(mcp)
    app.add_typer(docs_app, name="docs", hidden=True)
