"""The generated reference pages are current, and they name everything they describe."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main
from typer.testing import CliRunner

from slotwise.streams.cli import app
from slotwise.streams.cli.docs import generate, setting_names, stale
from slotwise.streams.cli.setting_notes import NOTES
from slotwise.streams.config import Settings

_REPO = Path(__file__).resolve().parents[3]


def test_the_committed_reference_pages_are_what_the_code_generates() -> None:
    assert stale(_REPO) == [], "run `slotwise docs generate` and commit docs/reference/"


def test_every_command_and_option_is_in_the_cli_reference() -> None:
    page = generate()["cli.md"]
    todo = [(["slotwise"], typer.main.get_command(app))]
    while todo:
        path, command = todo.pop()
        assert f"## `{' '.join(path)}`" in page
        for param in command.params:
            for spelled in getattr(param, "opts", []):
                if spelled.startswith("--") and not param.hidden:
                    assert f"`{spelled}`" in page, (path, spelled)
        todo.extend(([*path, name], sub) for name, sub in getattr(command, "commands", {}).items())


def test_every_setting_is_in_the_configuration_reference() -> None:
    page = generate()["configuration.md"]
    for name in Settings.model_fields:
        assert f"`SLOTWISE_{name.upper()}`" in page


def test_a_setting_read_through_a_settings_method_names_the_method_s_callers() -> None:
    # The worker, the server and the client reach the brokers through
    # ``Settings.librdkafka()``, never by the field's name.
    page = generate()["configuration.md"]
    row = next(
        line for line in page.splitlines() if line.startswith("| `SLOTWISE_KAFKA_BOOTSTRAP`")
    )
    read_by = {role.strip() for role in row.split("|")[4].split(",")}
    assert {"worker", "server", "client"} <= read_by


def test_the_check_fails_on_a_stale_page(tmp_path: Path) -> None:
    folder = tmp_path / "docs" / "reference"
    folder.mkdir(parents=True)
    for name, text in generate().items():
        (folder / name).write_text(text)
    runner = CliRunner()
    assert (
        runner.invoke(app, ["docs", "generate", "--check", "--root", str(tmp_path)]).exit_code == 0
    )
    (folder / "cli.md").write_text("# hand-edited\n")
    done = runner.invoke(app, ["docs", "generate", "--check", "--root", str(tmp_path)])
    assert done.exit_code == 1
    assert "docs/reference/cli.md" in done.output


def test_the_k8s_configmap_sets_only_settings_that_exist() -> None:
    """A misspelt or removed variable in the ConfigMap would be ignored without a word."""
    configmap = (_REPO / "deploy" / "k8s" / "configmap.yaml").read_text()
    keys = set(re.findall(r"^\s+(SLOTWISE_[A-Z0-9_]+):", configmap, re.MULTILINE))
    assert keys, "the ConfigMap sets no SLOTWISE_* key"
    assert keys - setting_names() == set()


def test_every_setting_says_what_it_does_and_no_note_outlives_its_setting() -> None:
    page = generate()["configuration.md"]
    assert set(NOTES) <= setting_names()
    undescribed = [line.split("|")[1].strip() for line in page.splitlines() if "| — |" in line]
    assert undescribed == []
