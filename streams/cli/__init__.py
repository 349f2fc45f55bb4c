"""The ``slotwise`` command: a thin root that mounts each area's sub-commands.

The bare package is the agent-side client; the commands need a role's extras
(``slotwise[worker]``, ``[server]``, …). Without them the root still answers
``--version``, and any command says which extra it needs instead of a traceback.
"""

from __future__ import annotations

from importlib.metadata import version

import typer

__all__ = ["app"]

_HELP = "A streaming write pipeline that keeps an AI agent's long-term memory true."


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"slotwise {version('slotwise')}")
        raise typer.Exit


_VERSION = typer.Option(
    False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
)

app = typer.Typer(name="slotwise", help=_HELP, no_args_is_help=True)

try:
    from slotwise.streams.cli.commands import mount
except ModuleNotFoundError as exc:
    if (exc.name or "slotwise").startswith("slotwise"):
        raise  # a module of ours missing is a bug, not an extra to install
    _missing = exc.name

    @app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def _bare(ctx: typer.Context, show_version: bool = _VERSION) -> None:
        """Only --version: the commands need a role's extras."""
        typer.echo(
            f"slotwise: this command needs a role's extras ({_missing} is not installed): "
            "pip install 'slotwise[worker]' (or [server], [all])",
            err=True,
        )
        raise typer.Exit(2)
else:

    @app.callback()
    def _root(show_version: bool = _VERSION) -> None:
        """A streaming write pipeline that keeps an AI agent's long-term memory true."""

    mount(app)
