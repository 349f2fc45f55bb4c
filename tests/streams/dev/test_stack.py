"""The local stack manager: reuse over restart, detached processes, accurate status.

Nothing here stops the shared services: tests that need a service of their own
start a throwaway Redis on a spare port in a temporary data dir.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from typer.testing import CliRunner

from slotwise.streams.cli import app
from slotwise.streams.config import Settings
from slotwise.streams.dev.stack import MissingTool, ServiceChange, Stack, StackError

_REPO = Path(__file__).resolve().parents[1]


def _spare_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _by_name(changes: tuple[ServiceChange, ...]) -> dict[str, ServiceChange]:
    return {c.status.name: c for c in changes}


def _nothing_listening(data_dir: Path) -> Settings:
    return Settings(
        kafka_bootstrap=f"127.0.0.1:{_spare_port()}",
        redis_url=f"redis://127.0.0.1:{_spare_port()}/0",
        milvus_uri=f"http://127.0.0.1:{_spare_port()}",
        data_dir=data_dir,
    )


def test_status_of_a_stack_with_nothing_running_reports_every_service_down(
    tmp_path: Path,
) -> None:
    settings = _nothing_listening(tmp_path)

    rows = {s.name: s for s in Stack(settings).status()}

    assert list(rows) == ["kafka", "redis", "milvus"]
    assert rows["kafka"].address == settings.kafka_bootstrap
    assert rows["redis"].address == settings.redis_url.removeprefix("redis://")[:-2]
    assert rows["milvus"].address == settings.milvus_uri.removeprefix("http://")
    for row in rows.values():
        assert (row.healthy, row.pid, row.owner) == (False, None, "-")
        assert row.log_path == tmp_path / row.name / f"{row.name}.log"


def test_a_data_dir_inside_the_source_tree_is_refused() -> None:
    with pytest.raises(StackError, match="inside the source tree"):
        Stack(Settings(), _REPO / "data")


def test_a_missing_program_is_an_error_that_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    stack = Stack(_nothing_listening(tmp_path))

    with pytest.raises(MissingTool, match="apt-get install -y"):
        stack.up()

    assert not any(s.pid or s.healthy for s in stack.status()), "a service started anyway"


@pytest.mark.kafka
@pytest.mark.redis
@pytest.mark.milvus
def test_up_twice_reuses_every_service_and_keeps_its_pid(stack: Settings) -> None:
    first = _by_name(Stack(stack).up())
    second = _by_name(Stack(stack).up())

    assert {c.action for c in second.values()} == {"reused"}
    for name, change in second.items():
        assert change.status.healthy
        assert change.status.pid == first[name].status.pid


@pytest.fixture
def own_redis(stack: Settings, tmp_path: Path) -> Iterator[Stack]:
    """The shared Kafka and Milvus, and a Redis of its own on a spare port, stopped after."""
    settings = Settings(
        kafka_bootstrap=stack.kafka_bootstrap,
        redis_url=f"redis://127.0.0.1:{_spare_port()}/0",
        milvus_uri=stack.milvus_uri,
        data_dir=tmp_path,
    )
    own = Stack(settings)
    yield own
    own.down(grace_s=5)


@pytest.mark.kafka
@pytest.mark.redis
@pytest.mark.milvus
def test_a_started_redis_is_detached_reused_then_stopped_while_shared_ones_stay(
    own_redis: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _by_name(own_redis.up())
    second = _by_name(own_redis.up())

    started = first["redis"].status
    assert first["redis"].action == "started"
    assert started.pid is not None and started.healthy
    assert os.getsid(started.pid) == started.pid  # its own session: outlives the CLI
    assert (tmp_path / "redis" / "redis.pid").read_text().strip() == str(started.pid)
    assert first["kafka"].action == first["milvus"].action == "reused"
    assert first["kafka"].status.owner == "external"
    assert second["redis"].action == "reused"
    assert second["redis"].status.pid == started.pid

    client = redis.Redis.from_url(f"redis://{started.address}/0")
    assert client.config_get("appendonly") == {"appendonly": "yes"}
    assert client.config_get("dir") == {"dir": str(tmp_path / "redis")}
    client.close()

    after = _by_name(own_redis.down(grace_s=5))
    assert after["redis"].action == "stopped"
    assert after["kafka"].action == after["milvus"].action == "not ours"

    status = {s.name: s for s in own_redis.status()}
    assert (status["redis"].healthy, status["redis"].pid, status["redis"].owner) == (
        False,
        None,
        "-",
    )
    assert status["kafka"].healthy and status["milvus"].healthy
    assert not (tmp_path / "redis" / "redis.pid").exists()

    monkeypatch.setenv("SLOTWISE_REDIS_URL", f"redis://{started.address}/0")
    shown = CliRunner().invoke(app, ["stack", "status", "--data-dir", str(tmp_path)])
    assert shown.exit_code == 1
    redis_row = next(line for line in shown.output.splitlines() if "redis" in line)
    assert "down" in redis_row and "healthy" not in redis_row
