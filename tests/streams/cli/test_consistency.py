"""One command line: durations one way, panels by job, old spellings kept, entry points in."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from slotwise.streams.cli import app, panels
from slotwise.streams.cli.durations import duration, duration_days

_ROOT: Any = typer.main.get_command(app)
_PANELS = {panels.RUN, panels.READ, panels.GOVERN, panels.MAINTAIN, panels.MIGRATE, panels.OPERATE}


def _command(*path: str) -> Any:
    command = _ROOT
    for name in path:
        command = command.commands[name]
    return command


def _options(*path: str) -> set[str]:
    return {o for p in _command(*path).params for o in getattr(p, "opts", [])}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30), ("15m", 900), ("6h", 21_600), ("7d", 604_800), ("1.5h", 5400)],
)
def test_a_duration_has_one_spelling(text: str, seconds: float) -> None:
    assert duration(text) == seconds


def test_a_bare_number_is_the_old_spelling_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert duration("90") == 90
    assert duration_days("3") == 3
    assert duration_days("12h") == 0.5
    err = capsys.readouterr().err
    assert "deprecated" in err and "90s" in err and "3d" in err


@pytest.mark.parametrize("text", ["", "6 hours", "-5s", "5w", "s"])
def test_a_duration_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(typer.BadParameter):
        duration(text)


def test_an_options_own_default_is_not_the_old_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    params = _command("wait").make_context("wait", ["s", "--observation", "o"]).params
    assert params["timeout"] == 30.0
    assert capsys.readouterr().err == ""


def test_the_version_is_the_installed_one() -> None:
    done = CliRunner().invoke(app, ["--version"])
    assert done.exit_code == 0
    assert done.output.strip() == f"slotwise {version('slotwise')}"


def test_every_visible_command_sits_in_a_panel_by_job() -> None:
    unplaced = {
        name: getattr(command, "rich_help_panel", None)
        for name, command in _ROOT.commands.items()
        if not command.hidden and getattr(command, "rich_help_panel", None) not in _PANELS
    }
    assert unplaced == {}


def test_the_archive_is_archive_and_forget_still_works() -> None:
    assert not _command("archive").hidden
    assert _command("forget").hidden
    assert _options("forget") == _options("archive")
    done = CliRunner().invoke(app, ["forget"])
    assert done.exit_code == 2  # no --subject and no --all: refused, as before
    assert "`slotwise forget` is now `slotwise archive`" in done.stderr


def test_erasures_tail_is_an_alias_of_tail_erasures() -> None:
    assert _command("erasures").hidden
    assert {"--subject", "--from-beginning", "--max", "--timeout", "--json"} <= _options("tail")
    assert _options("erasures", "tail") <= _options("tail")


def test_passes_take_subject_repeatable_and_all() -> None:
    for name in ("archive", "consolidate", "rebuild"):
        subject = next(p for p in _command(name).params if "--subject" in getattr(p, "opts", []))
        assert subject.multiple, name
        assert "--all" in _options(name), name


@pytest.mark.parametrize(
    ("path", "flags"),
    [
        (("facts",), {"--history", "--include-archived", "--json", "--as-of", "--believed-at"}),
        (("tail",), {"--from-beginning", "--max", "--timeout", "--json"}),
        (("eval",), {"--turns", "--out", "--end-to-end"}),
        (("erase",), {"--attribute", "--fact", "--reason", "--wait"}),
        (("forget",), {"--subject", "--all", "--as-of", "--dry-run", "--every"}),
        (("restore",), set()),
        (("calibrate",), {"--write"}),
        (("consolidate",), {"--subject", "--all", "--max-calls", "--every"}),
        (("reslot",), {"--attribute", "--dry-run"}),
        (("review", "list"), {"--subject", "--json"}),
        (("review", "accept"), set()),
        (("review", "reject"), set()),
        (("review", "edit"), {"--value"}),
        (("migrate", "start"), {"--to"}),
        (("migrate", "finish"), {"--grace", "--now"}),
        (("migrate", "adapter", "fit"), set()),
        (("serve",), {"--host", "--port"}),
        (("wait",), {"--observation"}),
        (("demo",), set()),
        (("worker",), set()),
        (("produce",), set()),
        (("stack", "up"), set()),
        (("topics", "create"), set()),
        (("topics", "schemas"), {"--write"}),
        (("bench",), set()),
        (("calibration-app",), set()),
    ],
)
def test_the_published_commands_and_flags_exist(path: tuple[str, ...], flags: set[str]) -> None:
    assert flags <= _options(*path)


def test_the_contract_check_is_reachable_from_slotwise() -> None:
    assert CliRunner().invoke(app, ["topics", "schemas"]).exit_code == 0
