"""`slotwise stack up --milvus server`: the session's Milvus server, named as such.

PyPI's standalone server runs its embedded etcd with a fixed peer port (2380), so
one machine holds one of them: this checks the server the ``milvus_server`` session
runs on (``slotwise stack up --milvus server`` in its data dir) rather than
starting a second one.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from slotwise.streams.cli import app
from slotwise.streams.config import Settings
from slotwise.streams.dev.stack import Stack

pytestmark = [
    pytest.mark.milvus_server,
    pytest.mark.server_only,
    pytest.mark.kafka,
    pytest.mark.redis,
]


def test_up_reuses_the_server_and_status_names_it_whatever_the_flag(stack: Settings) -> None:
    runner = CliRunner()
    # The server answers: `up` reuses it, even when asked for Lite.
    for flag in (["--milvus", "server"], ["--milvus", "lite"], []):
        up = runner.invoke(app, ["stack", "up", *flag])
        assert up.exit_code == 0, up.output
        assert "reused" in up.output
    rows = {r.name: r for r in Stack(stack).status()}
    assert rows["milvus"].healthy
    assert rows["milvus"].engine is not None
    assert rows["milvus"].engine.startswith("server v2.3")
    status = runner.invoke(app, ["stack", "status"])
    assert status.exit_code == 0, status.output
    assert "server" in status.output
