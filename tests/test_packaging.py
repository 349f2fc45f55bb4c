"""Installed, slotwise is one import name: ``slotwise``, over the repository's folders."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]
_PACKAGES = ("topics", "processors", "sinks", "models", "streams", "loadtest", "client")


def _clean_env() -> dict[str, str]:
    """No PYTHONPATH: what imports must come through the installed package."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_the_wheel_installs_one_top_level_name(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(_REPO), "--no-deps", "--no-build-isolation",
         "-q", "-w", str(tmp_path)],
        check=True,
        cwd=tmp_path,
        env=_clean_env(),
    )  # fmt: skip
    (wheel,) = tmp_path.glob("slotwise-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert top == {"slotwise", wheel.name.split("-py3")[0] + ".dist-info"}
    packages = {name.split("/")[1] for name in names if name.startswith("slotwise/")}
    assert packages == set(_PACKAGES)
    assert "slotwise/sinks/redis/lua/apply.lua" in names
    assert "slotwise/processors/attributes.v1.json" in names
    assert "slotwise/topics/schemas/fact.json" in names
    assert "slotwise/streams/api/templates/subject.html" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert (
        "slotwise = slotwise.streams.cli:app" in zipfile.ZipFile(wheel).read(entry_points).decode()
    )


def test_no_module_imports_a_folder_by_its_bare_name() -> None:
    bare = []
    for folder in (*_PACKAGES, "tests"):
        for path in (_REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                bare += [
                    f"{path.relative_to(_REPO)}:{node.lineno} {m}"
                    for m in modules
                    if m.split(".")[0] in _PACKAGES
                ]
    assert bare == []


def test_every_module_imports_from_outside_the_checkout(tmp_path: Path) -> None:
    script = (
        "import importlib, pkgutil, slotwise\n"
        "for info in pkgutil.walk_packages(slotwise.__path__, 'slotwise.'):\n"
        "    if not info.name.endswith('__main__'):\n"
        "        importlib.import_module(info.name)\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        cwd=tmp_path,
        env=_clean_env(),
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    for module in ("slotwise.streams", "slotwise.loadtest"):
        shown = subprocess.run(
            [sys.executable, "-m", module, "--help"],
            check=False,
            cwd=tmp_path,
            env=_clean_env(),
            capture_output=True,
        )
        assert shown.returncode == 0, shown.stderr.decode()[-3000:]


def _project_version() -> str:
    with (_REPO / "pyproject.toml").open("rb") as f:
        version: str = tomllib.load(f)["project"]["version"]
    return version


def _build(backend_call: str, source: Path, out: Path) -> Path:
    """One PEP 517 hook run in ``source`` without isolation, as ``python -m build -n`` does."""
    done = subprocess.run(
        [sys.executable, "-c",
         f"from setuptools import build_meta; print(build_meta.{backend_call}({str(out)!r}))"],
        check=False, cwd=source, env=_clean_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return out / done.stdout.strip().splitlines()[-1]


def test_the_sdist_builds_a_wheel_that_installs_and_reports_its_version(tmp_path: Path) -> None:
    """The release path: sdist from the checkout, wheel from the sdist, wheel into a new venv."""
    dist = tmp_path / "dist"
    dist.mkdir()
    sdist = _build("build_sdist", _REPO, dist)
    version = _project_version()
    assert sdist.name == f"slotwise-{version}.tar.gz"
    with tarfile.open(sdist) as archive:
        members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
        archive.extractall(tmp_path / "unpacked", filter="data")
    assert {"LICENSE", "README.md", "pyproject.toml"} <= members

    wheel = _build("build_wheel", tmp_path / "unpacked" / f"slotwise-{version}", dist)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"slotwise/{package}/py.typed" for package in _PACKAGES} <= names
    assert any(name.endswith(".dist-info/licenses/LICENSE") or name.endswith("/LICENSE")
               for name in names)  # fmt: skip

    # The venv borrows the machine's dependencies (no network here), never its slotwise:
    # the import is checked to come from the venv's own site-packages.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, env=_clean_env(), cwd=tmp_path,
    )  # fmt: skip
    where = subprocess.run(
        [python, "-c", "import slotwise.streams as s; print(s.__file__)"],
        check=True, env=_clean_env(), cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert where.stdout.strip().startswith(str(venv))
    shown = subprocess.run(
        [venv / "bin" / "slotwise", "--version"],
        check=False, env=_clean_env(), cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert shown.stdout.strip() == f"slotwise {version}"
