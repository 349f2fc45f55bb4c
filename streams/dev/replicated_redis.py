"""A throwaway replicated Redis: one primary and its replicas on spare ports.

For the tests and benchmarks that need replication (``WAIT`` before commit,
failover): the shared stack's Redis has no replica, and must not be given one.
Each node runs Debian's ``redis-server`` in its own directory under ``root``,
with AOF as the stack's Redis has; :meth:`ReplicatedRedis.stop` stops every
node this started. Like :mod:`slotwise.streams.dev.testing`, it ships in the
package because the benchmarks use it; no production process does.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import redis

from slotwise.streams.dev.testing import ChildProcess, ProcessError, service_port

__all__ = ["MASTER_NAME", "RedisNode", "ReplicatedRedis", "SentinelNode"]

MASTER_NAME = "slotwise"  # what deploy/compose's Sentinels monitor, and the settings' default


class RedisNode(ChildProcess):
    """One ``redis-server`` on 127.0.0.1:``port``, a replica of ``primary_port`` if given."""

    def __init__(
        self,
        root: Path,
        port: int,
        *,
        primary_port: int | None = None,
        appendfsync: str = "everysec",
    ) -> None:
        self.port = port
        self.dir = root / f"redis-{port}"
        self.dir.mkdir(parents=True, exist_ok=True)
        server = shutil.which("redis-server")
        if server is None:
            raise ProcessError("redis-server is not installed (apt-get install -y redis-server)")
        argv = [
            server,
            "--bind", "127.0.0.1", "--port", str(port), "--dir", str(self.dir),
            "--appendonly", "yes", "--appendfsync", appendfsync, "--save", "",
            "--daemonize", "no",
        ]  # fmt: skip
        if primary_port is not None:
            argv += ["--replicaof", "127.0.0.1", str(primary_port)]
        super().__init__(argv, self.dir / "redis.log", name=f"redis {port}")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=5)

    def aof_tail(self) -> Path:
        """The AOF file Redis appends to now (the newest incremental part)."""
        parts = sorted((self.dir / "appendonlydir").glob("*.incr.aof"), key=_part_number)
        if not parts:
            raise ProcessError(f"{self.name} has no incremental AOF in {self.dir}")
        return parts[-1]

    def wait_ready(self, timeout: float = 20.0) -> None:
        """Until it has loaded its data (and, as a replica, finished its first sync)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            client = self.client()
            try:
                info = client.info("replication")
                loaded = not client.info("persistence").get("loading")
                if loaded and (info["role"] == "master" or info.get("master_link_status") == "up"):
                    return
            except redis.RedisError:
                pass
            finally:
                client.close()
            time.sleep(0.1)
        raise ProcessError(f"{self.name} not ready in {timeout:.0f} s:\n{self.log_tail()}")


def _part_number(path: Path) -> int:
    # appendonly.aof.<n>.incr.aof
    return int(path.name.split(".")[-3])


class SentinelNode(ChildProcess):
    """``redis-server --sentinel`` watching ``primary_port`` (quorum 2, down after 1 s)."""

    def __init__(self, root: Path, port: int, *, primary_port: int) -> None:
        self.port = port
        self.dir = root / f"sentinel-{port}"
        self.dir.mkdir(parents=True, exist_ok=True)
        config = self.dir / "sentinel.conf"  # Sentinel rewrites its own file
        config.write_text(
            f"port {port}\nbind 127.0.0.1\ndir {self.dir}\n"
            f"sentinel monitor {MASTER_NAME} 127.0.0.1 {primary_port} 2\n"
            f"sentinel down-after-milliseconds {MASTER_NAME} 1000\n"
            f"sentinel failover-timeout {MASTER_NAME} 5000\n"
            f"sentinel parallel-syncs {MASTER_NAME} 1\n"
        )
        server = shutil.which("redis-server")
        if server is None:
            raise ProcessError("redis-server is not installed (apt-get install -y redis-server)")
        super().__init__([server, str(config), "--sentinel"], self.dir / "sentinel.log")
        self.name = f"sentinel {port}"

    def primary(self) -> int | None:
        """The port of the primary this Sentinel names now (None while it cannot say)."""
        client = redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=2)
        try:
            found = client.sentinel_get_master_addr_by_name(MASTER_NAME)
            return int(found[1]) if isinstance(found, tuple) else None
        except redis.RedisError:
            return None
        finally:
            client.close()

    def wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while self.primary() is None:
            self.check_alive()
            if time.monotonic() > deadline:
                raise ProcessError(f"{self.name} not ready in {timeout:.0f} s:\n{self.log_tail()}")
            time.sleep(0.1)


class ReplicatedRedis:
    """A primary, ``replicas`` replicas and ``sentinels`` Sentinels under ``root``; a context
    manager that stops them."""

    def __init__(
        self, root: Path, *, replicas: int = 1, sentinels: int = 0, appendfsync: str = "everysec"
    ) -> None:
        self.primary = RedisNode(root, service_port(), appendfsync=appendfsync)
        self.replicas = [
            RedisNode(root, service_port(), primary_port=self.primary.port) for _ in range(replicas)
        ]
        self.sentinels = [
            SentinelNode(root, service_port(), primary_port=self.primary.port)
            for _ in range(sentinels)
        ]

    @property
    def nodes(self) -> list[RedisNode | SentinelNode]:
        return [self.primary, *self.replicas, *self.sentinels]

    @property
    def sentinel_addresses(self) -> str:
        """What ``SLOTWISE_REDIS_SENTINELS`` names them by."""
        return ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)

    def current_primary(self) -> RedisNode | None:
        """The node every Sentinel names as the primary now; None while they disagree."""
        named = {s.primary() for s in self.sentinels}
        if len(named) != 1:
            return None
        return next((n for n in [self.primary, *self.replicas] if n.port in named), None)

    def wait_failover(self, timeout: float = 60.0) -> RedisNode:
        """Until every Sentinel names a primary other than the first one; that node."""
        deadline = time.monotonic() + timeout
        while True:
            named = self.current_primary()
            if named is not None and named is not self.primary:
                return named
            if time.monotonic() > deadline:
                raise ProcessError(
                    f"no failover in {timeout:.0f} s: Sentinels name "
                    f"{ {s.primary() for s in self.sentinels} }"
                )
            time.sleep(0.2)

    def start(self) -> Self:
        try:
            for node in self.nodes:
                node.start()
                node.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for node in reversed(self.nodes):  # the Sentinels first: no failover while stopping
            if node.alive():
                if isinstance(node, RedisNode):
                    node.resume()  # a stopped process would not act on SIGTERM
                node.terminate(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
