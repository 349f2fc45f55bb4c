"""Every slotwise command the deploy files run parses with the real CLI.

A renamed option or a value it refuses fails here, not at 3 a.m. in a CronJob.
"""

from __future__ import annotations

import pytest

from tests.deploy.manifests import (
    COMPOSE_FILES,
    UsageError,
    documents,
    interpolated,
    k8s_manifests,
    parse_slotwise_args,
)


def _compose_commands() -> list[tuple[str, list[str]]]:
    found = []
    for path in COMPOSE_FILES:
        (project,) = documents(path)
        for name, service in project["services"].items():
            if "build" in service:  # the slotwise image
                found.append((f"{path.name}:{name}", [interpolated(a) for a in service["command"]]))
    return found


def _k8s_commands() -> list[tuple[str, list[str]]]:
    found = []
    for path, _, doc in k8s_manifests():
        spec = doc.get("spec", {})
        template = spec.get("jobTemplate", {}).get("spec", spec).get("template", {})
        for container in template.get("spec", {}).get("containers", []):
            if container["image"] == "slotwise":
                found.append((f"{path.name}:{container['name']}", container["args"]))
    return found


FOUND = _compose_commands() + _k8s_commands()
COMMANDS = [pytest.param(args, id=where) for where, args in FOUND]


def test_the_commands_were_found() -> None:
    run = {args[0] for _, args in FOUND}
    assert {"worker", "serve", "archive", "consolidate", "topics"} <= run


@pytest.mark.parametrize("args", COMMANDS)
def test_the_command_parses(args: list[str]) -> None:
    context = parse_slotwise_args(args)
    assert context.info_name in args, "the arguments named no command"


@pytest.mark.parametrize(
    "args",
    [
        ["archive", "--all", "--every-hours", "6"],
        ["consolidate", "--all", "--every", "daily"],
        ["serve", "--port", "http"],
        ["forgett", "--all"],
    ],
)
def test_a_command_the_cli_does_not_know_fails(args: list[str]) -> None:
    with pytest.raises(UsageError):
        parse_slotwise_args(args)
