"""Installed, slotwise is one import name: ``slotwise``, over the repository's folders."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
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
