"""The documentation site builds with every link and anchor checked (mkdocs --strict)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]


def test_the_site_builds_strict(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        check=False, cwd=_REPO, capture_output=True, text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-5000:]
    assert (tmp_path / "reference" / "cli" / "index.html").exists()


def test_every_page_is_in_the_navigation() -> None:
    config = (_REPO / "mkdocs.yml").read_text()
    pages = {p.relative_to(_REPO / "docs").as_posix() for p in (_REPO / "docs").rglob("*.md")}
    assert {page for page in pages if page not in config} == set()
