"""The layer contracts in pyproject.toml hold: no import runs back up the house."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]


def test_the_import_contracts_are_kept() -> None:
    lint_imports = shutil.which("lint-imports")
    assert lint_imports is not None, "import-linter is a test dependency: pip install -e '.[test]'"
    done = subprocess.run(
        [lint_imports, "--no-cache"], cwd=_REPO, check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
