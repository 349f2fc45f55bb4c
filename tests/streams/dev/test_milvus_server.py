"""`slotwise stack up --milvus server`: a Milvus server of its own data dir, named as such.

Starts a second Milvus (the standalone server from PyPI's ``milvus`` package) on a
spare port; the session's Kafka and Redis are reused and left running.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from slotwise.streams.cli import app
from slotwise.streams.config import Settings
from slotwise.streams.dev.stack import Stack

pytestmark = [pytest.mark.milvus_server, pytest.mark.slow]


def _spare_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.timeout(600)
def test_a_server_is_started_named_and_stopped_by_the_data_dir_that_started_it(
    stack: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = f"http://127.0.0.1:{_spare_port()}"
    env = {
        "SLOTWISE_KAFKA_BOOTSTRAP": stack.kafka_bootstrap,
        "SLOTWISE_REDIS_URL": stack.redis_url,
        "SLOTWISE_MILVUS_URI": uri,
        "SLOTWISE_DATA_DIR": str(tmp_path),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SLOTWISE_STACK_MILVUS", raising=False)
    runner = CliRunner()
    try:
        up = runner.invoke(app, ["stack", "up", "--milvus", "server"])
        assert up.exit_code == 0, up.output
        changes = {c.status.name: c for c in Stack(Settings()).status()}
        assert changes["milvus"].engine is not None
        assert changes["milvus"].engine.startswith("server v2.3")
        assert changes["milvus"].pid is not None

        # No flag: status and down act on the engine this data dir started.
        status = runner.invoke(app, ["stack", "status"])
        assert status.exit_code == 0, status.output
        assert "server" in status.output
    finally:
        down = runner.invoke(app, ["stack", "down"])
    assert down.exit_code == 0, down.output
    rows = {r.name: r for r in Stack(Settings()).status()}
    assert not rows["milvus"].healthy and rows["milvus"].pid is None
    # The session's Kafka and Redis were reused, not started, so not stopped.
    assert rows["kafka"].healthy and rows["redis"].healthy
    assert not (tmp_path / "milvus" / "engine").exists()
