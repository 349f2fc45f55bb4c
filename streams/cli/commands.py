"""Every command group of ``slotwise``, mounted on the root in one place.

Each command sits in the help panel of its job (``streams/cli/panels.py``). Old
spellings stay as hidden aliases that print a deprecation line: ``forget`` (now
``archive``: a person asking an agent to forget means erase) and ``erasures tail``
(now ``tail erasures``).
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from slotwise.streams.cli.consolidate import consolidate, reslot
from slotwise.streams.cli.docs import docs_app
from slotwise.streams.cli.durations import old_name
from slotwise.streams.cli.entry import PASS_THROUGH, bench, calibration_app, schemas
from slotwise.streams.cli.erase import erase, erasures_app
from slotwise.streams.cli.evaluate import evaluate
from slotwise.streams.cli.forget import calibrate, forget, restore
from slotwise.streams.cli.mcp import mcp
from slotwise.streams.cli.migrate import migrate_app
from slotwise.streams.cli.panels import GOVERN, MAINTAIN, MIGRATE, OPERATE, READ, RUN
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
    """Add every command and group to ``app``, each under its job's panel."""
    command: Callable[..., None]
    for command in (worker, serve, mcp, demo):
        app.command(rich_help_panel=RUN)(command)
    for command in (facts, search, tail, wait, produce):
        app.command(rich_help_panel=READ)(command)
    app.command(rich_help_panel=GOVERN)(erase)
    app.add_typer(review_app, name="review", rich_help_panel=GOVERN)
    app.add_typer(token_app, name="token", rich_help_panel=GOVERN)
    app.command("archive", rich_help_panel=MAINTAIN)(forget)
    app.command("forget", hidden=True)(old_name(forget, "forget", "archive"))
    for command in (restore, consolidate, reslot, calibrate):
        app.command(rich_help_panel=MAINTAIN)(command)
    app.command("calibration-app", rich_help_panel=MAINTAIN, context_settings=PASS_THROUGH)(
        calibration_app
    )
    app.add_typer(migrate_app, name="migrate", rich_help_panel=MIGRATE)
    app.add_typer(stack_app, name="stack", rich_help_panel=OPERATE)
    app.add_typer(topics_app, name="topics", rich_help_panel=OPERATE)
    topics_app.command("schemas")(schemas)
    app.command(rich_help_panel=OPERATE)(rebuild)
    app.command("eval", rich_help_panel=OPERATE)(evaluate)
    app.command("bench", rich_help_panel=OPERATE, context_settings=PASS_THROUGH)(bench)
    app.add_typer(erasures_app, name="erasures")  # hidden: `slotwise tail erasures`
    app.add_typer(docs_app, name="docs", hidden=True)
