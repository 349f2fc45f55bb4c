"""Entry points that lived outside ``slotwise``, reachable from it.

``slotwise bench`` is ``python -m slotwise.loadtest``, ``slotwise topics schemas`` is
``python -m slotwise.topics.contracts`` and ``slotwise calibration-app`` is ``python -m
slotwise.streams.passes.calibration_app``; the module spellings keep working. Each
hands its arguments to the module's own parser untouched, so ``--help`` shows its
options, and each loads its module only when run (the CLI starts quickly).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

__all__ = ["PASS_THROUGH", "bench", "calibration_app", "schemas"]

# The module parses what follows; typer must neither read it nor answer --help itself.
PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}


def bench(ctx: typer.Context) -> None:
    """Run benchmark scenarios (python -m slotwise.loadtest); `slotwise bench --help` lists them."""
    from slotwise.loadtest.__main__ import main  # noqa: PLC0415 - the benchmarks' weight

    raise typer.Exit(main(list(ctx.args)))


def calibration_app(ctx: typer.Context) -> None:
    """Run the streaming half-life calibration app (faust); arguments after it are faust's."""
    from slotwise.streams.passes.calibration_app import main  # noqa: PLC0415 - faust

    sys.argv = ["slotwise calibration-app", *ctx.args]
    main()


def schemas(
    write: Annotated[
        bool, typer.Option("--write", help="Regenerate the files instead of checking them.")
    ] = False,
) -> None:
    """Check (or --write) the published JSON Schemas against the record models."""
    from slotwise.topics.contracts import main  # noqa: PLC0415

    raise typer.Exit(main(["--write"] if write else []))
