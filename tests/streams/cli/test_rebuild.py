"""``slotwise rebuild`` takes exactly one scope, before it touches any service."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from slotwise.streams.cli import app


@pytest.mark.parametrize("args", [[], ["--all", "--subject", "user-1"], ["--verify"]])
def test_rebuild_needs_one_scope(args: list[str]) -> None:
    result = CliRunner().invoke(app, ["rebuild", *args])
    assert result.exit_code == 2
    assert "--subject S or --all" in result.output
