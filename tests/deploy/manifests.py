"""The deploy files as the tests read them: YAML documents, commands, settings, PromQL.

Shared by the offline checks (schemas, promtool, the CLI's own parser) and the live one
(the dashboard's and the alerts' metric names against a worker's ``/metrics``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
import yaml
from pydantic import AliasChoices, AliasPath, BaseModel
from pydantic_settings import BaseSettings

from slotwise.streams.cli import app

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE_FILES = sorted((DEPLOY / "compose").glob("compose*.yaml"))
PROMETHEUS_RULE = K8S / "monitoring" / "prometheusrule.yaml"
DASHBOARD = DEPLOY / "monitoring" / "slotwise-dashboard.json"
# Helm charts' values, not manifests: the charts render them (deploy/README.md).
HELM_VALUES = {K8S / "milvus" / "values.yaml", K8S / "redis" / "values.yaml"}


def documents(path: Path) -> list[dict[str, Any]]:
    """The YAML documents of a file, empty ones dropped (merge keys resolved)."""
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def k8s_manifests() -> Iterator[tuple[Path, int, dict[str, Any]]]:
    """(file, index, document) of every Kubernetes manifest under deploy/k8s."""
    for path in sorted(K8S.rglob("*.yaml")):
        if path not in HELM_VALUES:
            for index, doc in enumerate(documents(path)):
                yield path, index, doc


# ----------------------------------------------------------------------------- settings


def setting_env_names(settings: type[BaseModel], prefix: str | None = None) -> set[str]:
    """Every environment variable a settings class reads, from its fields alone.

    Plain fields are ``<env_prefix><NAME>`` or their alias; a field that is itself a
    settings group is read under its own prefix, or, with ``env_nested_delimiter``, as
    ``<prefix><NAME><delimiter><FIELD>``; so the names follow Settings however it is
    split into typed groups.
    """
    config = settings.model_config
    own_prefix = str(config.get("env_prefix", "")) if prefix is None else prefix
    delimiter = config.get("env_nested_delimiter")
    names: set[str] = set()
    for name, field in settings.model_fields.items():
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            if delimiter:
                names |= setting_env_names(group, f"{own_prefix}{name.upper()}{delimiter}")
            elif issubclass(group, BaseSettings):
                names |= setting_env_names(group)
            else:
                names.add(f"{own_prefix}{name}".upper())
            continue
        alias = field.validation_alias or field.alias
        if isinstance(alias, str):
            names.add(alias.upper())
        elif isinstance(alias, AliasChoices):
            names |= {c.upper() for c in alias.choices if isinstance(c, str)}
        elif isinstance(alias, AliasPath):
            names.add(str(alias.path[0]).upper())
        else:
            names.add(f"{own_prefix}{name}".upper())
    return names


# ------------------------------------------------------------------------------ commands

_INTERPOLATION = re.compile(r"\$\{(?P<name>\w+)(?::?-(?P<default>[^}]*))?\}")


def interpolated(text: str) -> str:
    """Compose's ``${NAME:-default}`` as it reads with nothing set: the default, or empty."""
    return _INTERPOLATION.sub(lambda found: found["default"] or "", text)


# The click in use (typer vendors its own): BadParameter derives from its UsageError, which
# every refusal of the parser (unknown command, option or value) raises.
UsageError: type[Exception] = typer.BadParameter.__base__  # type: ignore[assignment]


def parse_slotwise_args(args: list[str]) -> Any:
    """Parse ``slotwise <args>`` with the real CLI, running nothing.

    Raises :data:`UsageError` on an unknown command, option or a value an option refuses;
    returns the innermost command's (click) context.
    """
    command: Any = typer.main.get_command(app)
    name, rest, parent = "slotwise", list(args), None
    while isinstance(command, typer.core.TyperGroup):
        context = command.make_context(name, [], parent=parent, resilient_parsing=True)
        found = command.get_command(context, rest[0]) if rest else None
        if found is None:
            raise UsageError(f"{name}: no command {rest[:1]}")
        name, rest, parent, command = rest[0], rest[1:], context, found
    return command.make_context(name, rest, parent=parent)


# ----------------------------------------------------------------------------- promtool


def promtool() -> str:
    """The promtool `make setup` built (``go install``): on PATH, or in Go's bin folder."""
    found = shutil.which("promtool")
    go = shutil.which("go")
    if found is None and go is not None:
        gopath = subprocess.run([go, "env", "GOPATH"], capture_output=True, text=True, check=True)
        found = shutil.which("promtool", path=str(Path(gopath.stdout.strip()) / "bin"))
    if found is None:
        raise AssertionError("promtool is missing: `make setup` builds it with `go install`")
    return found


def run_promtool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


def alert_rule_groups() -> dict[str, Any]:
    """The PrometheusRule's spec: a Prometheus rule file (``groups:``) as it stands."""
    (rule,) = documents(PROMETHEUS_RULE)
    spec: dict[str, Any] = rule["spec"]
    return spec


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def dashboard_queries(board: dict[str, Any]) -> list[str]:
    """Every PromQL query of the dashboard's panels, rows' nested panels included."""
    queries = []
    for panel in _panels(board["panels"]):
        queries += [target["expr"] for target in panel.get("targets", [])]
    return queries


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))


# Grafana's interval variables, as Prometheus would see them after Grafana's substitution.
_GRAFANA_INTERVALS = {"$__rate_interval": "2m", "$__interval": "1m", "$__range": "6h"}


def as_prometheus(query: str) -> str:
    """A dashboard query with Grafana's interval variables replaced by durations."""
    for variable, duration in _GRAFANA_INTERVALS.items():
        query = query.replace(variable, duration)
    return query


# -------------------------------------------------------------------------------- PromQL

_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan", "by", "without", "on"}
_KEYWORDS |= {"ignoring", "group_left", "group_right", "atan2"}


def metric_names(query: str) -> set[str]:
    """The metric names a PromQL query selects.

    Strings, label matchers, ranges and grouping label lists are removed first; what
    remains of an identifier is a function (followed by ``(``), a keyword, or a metric.
    """
    text = _STRING.sub('""', query)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = _GROUPING.sub(" ", text)
    names = set()
    for found in _IDENTIFIER.finditer(text):
        before = text[found.start() - 1] if found.start() else " "
        if before.isdigit() or before == ".":  # an exponent or a duration's unit
            continue
        if text[found.end() :].lstrip().startswith("(") or found[0].lower() in _KEYWORDS:
            continue
        names.add(found[0])
    return names
