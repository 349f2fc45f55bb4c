"""``slotwise forget``, ``restore`` and ``calibrate``: soft forgetting from the command line.

``forget`` and ``restore`` publish commands and change nothing themselves: the
worker applies them in order with the subject's writes. ``calibrate`` only
reads and proposes; ``--write`` writes a new vocabulary version beside the
current one for a human to review, and nothing loads it until someone does.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import uuid
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from slotwise.processors.calibration import HalfLifeFit, current_half_lives, propose_vocabulary
from slotwise.processors.forgetting import ForgetPolicy, Selection
from slotwise.processors.schema import DEFAULT_SCHEMA, AttributeSchema
from slotwise.streams.api.operations import subject_of_archived
from slotwise.streams.cli.durations import duration
from slotwise.streams.config import ForgetSettings, Settings
from slotwise.streams.passes.calibration_read import (
    CalibrationUnavailable,
    changelog_lifetimes,
    fits_of,
    store_lifetimes,
)
from slotwise.streams.passes.forget import (
    PassReport,
    all_subjects,
    dry_run,
    forget_commands,
    publish_commands,
    run_schedule,
    wait_applied,
)
from slotwise.streams.read.store import open_store
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Command

__all__ = ["calibrate", "forget", "restore"]

_out = Console()
_err = Console(stderr=True)


def _aware(moment: datetime | None) -> datetime | None:
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=UTC)


def forget(  # noqa: PLR0917 - typer reads its options from the parameters
    subject: Annotated[
        list[str] | None, typer.Option("--subject", help="A subject to evaluate (repeatable).")
    ] = None,
    every_subject: Annotated[bool, typer.Option("--all", help="Every subject.")] = False,
    as_of: Annotated[
        datetime | None,
        typer.Option("--as-of", help="Evaluate at this instant (ISO-8601, UTC if bare; now)."),
    ] = None,
    dry_run_only: Annotated[
        bool, typer.Option("--dry-run", help="Score here and show; publish nothing.")
    ] = False,
    threshold: Annotated[float | None, typer.Option(help="Archive below this score.")] = None,
    budget: Annotated[
        int | None, typer.Option(help="Keep at most this many hot facts per subject.")
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Return once every command is applied.")] = (
        False
    ),
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", parser=duration, metavar="DURATION", help="How long --wait waits (10m)."
        ),
    ] = 600.0,
    every: Annotated[
        float | None,
        typer.Option(
            "--every",
            parser=duration,
            metavar="DURATION",
            help="Run a pass over every subject each DURATION (6h, 1d).",
        ),
    ] = None,
    rounds: Annotated[int | None, typer.Option(help="With --every: stop after N passes.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Archive facts that decayed below the threshold or past the budget (soft: restorable)."""
    if every is None and not every_subject and not subject:
        raise typer.BadParameter("name --subject S (repeatable) or --all")
    if every is not None and every <= 0:
        raise typer.BadParameter(f"--every {every:g}s: a positive duration like 6h")
    knobs = ForgetSettings()
    policy = knobs.policy()
    policy = ForgetPolicy(
        threshold=policy.threshold if threshold is None else threshold,
        budget=policy.budget if budget is None else budget,
        delta=policy.delta,
        verified_window=policy.verified_window,
    )
    settings = Settings()
    if every is not None:
        _schedule(settings, policy, every, rounds)
        return
    instant = _aware(as_of) or datetime.now(UTC)

    async def run() -> None:
        store = open_store(settings)
        try:
            subjects = await all_subjects(store) if every_subject else list(subject or [])
            if dry_run_only:
                schema = AttributeSchema.load()
                found = await dry_run(
                    store,
                    subjects,
                    as_of=instant,
                    policy=policy,
                    half_lives=knobs.half_lives_of(schema),
                )
                _show_dry_run(found, instant, policy, as_json)
                return
            pass_id = str(uuid.uuid4())
            commands = forget_commands(subjects, as_of=instant, policy=policy, pass_id=pass_id)
            await asyncio.to_thread(publish_commands, settings, commands)
            _err.print(
                f"published {len(commands)} forget command(s), pass {pass_id}, "
                f"as of {instant.isoformat()}"
            )
            if wait:
                report = await wait_applied(store, commands, timeout_s=timeout)
                _show_report(report, pass_id, as_json)
                if not report.complete:
                    raise typer.Exit(1)
        finally:
            await store.close()

    _guarded(run())


def _schedule(settings: Settings, policy: ForgetPolicy, every_s: float, rounds: int | None) -> None:
    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        store = open_store(settings)
        try:
            await run_schedule(
                settings,
                store,
                every_s=every_s,
                policy=policy,
                stop=stop,
                rounds=rounds,
                on_round=lambda r: _show_report(r, "scheduled", False),
            )
        finally:
            await store.close()

    _guarded(run())


def _guarded(work: Any) -> None:
    try:
        asyncio.run(work)
    except SlotwiseError as exc:
        _err.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None


def _show_dry_run(
    found: dict[str, Selection], as_of: datetime, policy: ForgetPolicy, as_json: bool
) -> None:
    if as_json:
        for subject, selection in found.items():
            for scored in selection.archived:
                line = {
                    "subject_id": subject,
                    "fact_id": scored.fact.fact_id,
                    "score": scored.score,
                    "reason": scored.reason,
                    "text": scored.fact.text,
                }
                sys.stdout.write(json.dumps(line) + "\n")
        return
    table = Table(title=f"forget --dry-run as of {as_of.isoformat()}")
    for column in ("subject", "scored", "archived", "below", "over budget", "lowest kept"):
        table.add_column(column)
    for subject, selection in found.items():
        lowest = min((s.score for s in selection.kept), default=None)
        table.add_row(
            subject,
            str(len(selection.kept) + len(selection.archived)),
            str(len(selection.archived)),
            str(selection.below_threshold),
            str(selection.over_budget),
            "-" if lowest is None else f"{lowest:.3f}",
        )
    _out.print(table)
    total = sum(len(s.archived) for s in found.values())
    _out.print(f"{total} fact(s) would be archived ({policy_line(policy)}); each one with --json")


def policy_line(policy: ForgetPolicy) -> str:
    budget = "no budget" if policy.budget is None else f"budget {policy.budget}"
    return f"threshold {policy.threshold:g}, {budget}, delta {policy.delta:g}"


def _show_report(report: PassReport, pass_id: str, as_json: bool) -> None:
    body = {
        "pass_id": pass_id,
        "commands": report.commands,
        "applied": report.applied,
        "archived": report.archived,
        "seconds": round(report.seconds, 3),
    }
    if as_json:
        sys.stdout.write(json.dumps(body) + "\n")
    else:
        _out.print(
            f"pass {pass_id}: {report.applied} of {report.commands} subjects applied, "
            f"{report.archived} fact(s) archived in {report.seconds:.1f} s"
        )


def restore(
    fact_id: Annotated[str, typer.Argument(help="The archived fact to bring back.")],
    subject: Annotated[
        str | None, typer.Option("--subject", help="Its subject (found in the cold tier if not).")
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Return once it is applied.")] = False,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", parser=duration, metavar="DURATION", help="How long --wait waits (1m)."
        ),
    ] = 60.0,
) -> None:
    """Bring an archived fact back to the hot tier (a command, ordered with the writes)."""
    settings = Settings()
    owner = subject or subject_of_archived(settings, fact_id)
    if owner is None:
        _err.print(f"[red]{fact_id} is in no cold tier; name its subject with --subject[/]")
        raise typer.Exit(2)
    now = datetime.now(UTC)
    command = Command(
        schema="command/1",
        command_id=str(uuid.uuid4()),
        subject_id=owner,
        command="restore",
        issued_at=now,
        as_of=now,
        fact_id=fact_id,
        reason="requested from the command line",
    )

    async def run() -> None:
        await asyncio.to_thread(publish_commands, settings, [command])
        _err.print(f"published restore {command.command_id} of {fact_id} ({owner})")
        if wait:
            store = open_store(settings)
            try:
                report = await wait_applied(store, [command], timeout_s=timeout)
                blob = await store.applied(owner, command.command_id)
            finally:
                await store.close()
            if not report.complete or blob is None:
                _err.print(f"[red]not applied within {timeout:g} s[/]")
                raise typer.Exit(1)
            from slotwise.streams.write.outputs import StoredOutputs  # noqa: PLC0415

            _out.print(StoredOutputs.decode(blob).reason or "restored")

    _guarded(run())


def calibrate(  # noqa: PLR0917 - typer reads its options from the parameters
    write: Annotated[
        bool, typer.Option("--write", help="Write the proposal as a new vocabulary version.")
    ] = False,
    out: Annotated[
        Path | None, typer.Option(help="Where --write writes (default: beside the vocabulary).")
    ] = None,
    from_store: Annotated[
        bool,
        typer.Option("--from-store", help="Closed lifetimes from a store scan, not the stream."),
    ] = False,
    min_events: Annotated[
        int, typer.Option(help="Closed lifetimes a category needs before --write changes it.")
    ] = 30,
    confidence: Annotated[float | None, typer.Option(help="Interval level (0.95).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per category.")] = False,
) -> None:
    """Fit each category's half-life from observed lifetimes; propose, never apply."""
    settings = Settings()
    knobs = ForgetSettings()
    level = confidence or knobs.calibrate_confidence
    schema = AttributeSchema.load()
    now = datetime.now(UTC)
    try:
        closed = {} if from_store else changelog_lifetimes(settings)
        censored = store_lifetimes(settings, schema, as_of=now, closed=from_store)
    except CalibrationUnavailable as exc:
        _err.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None
    fits = fits_of(closed, censored, current_half_lives(schema), confidence=level)
    _show_fits(fits, as_json, source="store" if from_store else "stream")
    if write:
        document = json.loads(
            resources.files("slotwise.processors").joinpath(DEFAULT_SCHEMA).read_text("utf-8")
        )
        proposed = propose_vocabulary(
            document, {f.category: f for f in fits}, min_events=min_events
        )
        target = out or _beside_vocabulary(str(proposed["version"]))
        if target.exists():
            _err.print(f"[red]{target} exists; not overwritten[/]")
            raise typer.Exit(2)
        target.write_text(json.dumps(proposed, indent=2, ensure_ascii=False) + "\n", "utf-8")
        _err.print(f"wrote {target} (version {proposed['version']}) for review; not applied")


def _beside_vocabulary(version: str) -> Path:
    folder = Path(str(resources.files("slotwise.processors")))
    return folder / f"attributes.v{version}.json"


def _days(value: float | None) -> str:
    return "∞" if value is None else f"{value:,.0f}"


def _show_fits(fits: list[HalfLifeFit], as_json: bool, *, source: str) -> None:
    if as_json:
        for f in fits:
            line = {
                "category": f.category,
                "current_days": f.current_days,
                "proposed_days": f.half_life_days,
                "interval_days": [f.low_days, f.high_days],
                "confidence": f.confidence,
                "closed": f.lifetimes.closed,
                "censored": f.lifetimes.open,
                "exposure_days": f.lifetimes.exposure_days,
                "naive_mean_days": f.lifetimes.naive_mean_days,
                "drift": f.drift,
            }
            sys.stdout.write(json.dumps(line) + "\n")
        return
    level = f"{fits[0].confidence:.0%}" if fits else "95%"
    table = Table(title=f"half-lives (closed lifetimes from the {source})")
    for column in ("category", "current", "proposed", f"{level} interval", "closed", "censored"):
        table.add_column(column, justify="right" if column != "category" else "left")
    table.add_column("drift", justify="right")
    for f in fits:
        table.add_row(
            f.category,
            _days(f.current_days),
            _days(f.half_life_days),
            f"{_days(f.low_days)} to {_days(f.high_days)}",
            str(f.lifetimes.closed),
            str(f.lifetimes.open),
            "-" if f.drift is None else f"{f.drift:.2f}",
        )
    _out.print(table)
    _out.print("days; proposed only: `--write` writes a new vocabulary version for review")
