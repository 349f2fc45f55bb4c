"""The compose files against the Compose Specification's JSON Schema, offline.

The schema is the one check-jsonschema vendors (``vendor.compose-spec``, from the
compose-spec project); what the schema cannot see (references between services,
volumes and configs) is checked here too.
"""

from __future__ import annotations

import copy
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.deploy.manifests import COMPOSE_FILES, documents


def compose_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(
        files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text()
    )
    return schema


def schema_errors(project: dict[str, Any]) -> list[str]:
    schema = compose_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [
        f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(project)
    ]


def _project(path: Path) -> dict[str, Any]:
    (project,) = documents(path)
    return project


FILES = [pytest.param(path, id=path.name) for path in COMPOSE_FILES]


def test_both_topologies_exist() -> None:
    assert {p.name for p in COMPOSE_FILES} >= {"compose.yaml", "compose.single.yaml"}


@pytest.mark.parametrize("path", FILES)
def test_the_compose_file_follows_the_specification(path: Path) -> None:
    assert schema_errors(_project(path)) == []


@pytest.mark.parametrize(
    "breakage",
    [
        pytest.param(lambda p: p["services"]["topics"].update(comand=["topics"]), id="misspelt"),
        pytest.param(lambda p: p["services"]["serve"].update(ports=8080), id="wrong type"),
        pytest.param(
            lambda p: p["services"]["serve"]["depends_on"]["redis"].update(condition="started"),
            id="unknown condition",
        ),
        pytest.param(lambda p: p.update(service={}), id="unknown top-level key"),
    ],
)
@pytest.mark.parametrize("path", FILES)
def test_a_broken_copy_of_a_compose_file_fails(path: Path, breakage: Any) -> None:
    broken = copy.deepcopy(_project(path))
    breakage(broken)
    assert schema_errors(broken)


@pytest.mark.parametrize("path", FILES)
def test_every_reference_names_something_the_file_defines(path: Path) -> None:
    project = _project(path)
    services = project["services"]
    volumes = set(project.get("volumes") or {})
    configs = set(project.get("configs") or {})
    for name, service in services.items():
        assert set(service.get("depends_on") or {}) <= set(services), name
        for volume in service.get("volumes") or []:
            source = volume.split(":", 1)[0] if isinstance(volume, str) else volume["source"]
            if not source.startswith((".", "/")):
                assert source in volumes, f"{name}: volume {source} is not declared"
            else:
                assert (path.parent / source).exists(), f"{name}: {source} is missing"
        for config in service.get("configs") or []:
            assert (config if isinstance(config, str) else config["source"]) in configs, name


@pytest.mark.parametrize("path", FILES)
def test_each_topology_runs_the_worker_the_api_and_the_scheduled_passes(path: Path) -> None:
    commands = [s.get("command") for s in _project(path)["services"].values() if "build" in s]
    first_words = sorted(c[0] for c in commands)
    assert {"worker", "serve", "archive", "consolidate", "topics"} <= set(first_words)
    assert ["archive", "--all", "--every", "6h"] in commands
    assert any(c[:2] == ["consolidate", "--all"] for c in commands)
