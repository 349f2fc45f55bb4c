"""A throwaway replicated Redis: one primary and its replicas on spare ports.

For the tests and benchmarks that need replication (``WAIT`` before commit,
failover): the shared stack's Redis has no replica, and must not be given one.
Each node runs Debian's ``redis-server`` in its own directory under ``root``,
with AOF as the stack's Redis has; :meth:`ReplicatedRedis.stop` stops every
node this started. Like :mod:`slotwise.streams.testing`, it ships in the
package because the benchmarks use it; no production process does.
"""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import redis

from slotwise.streams.testing import ChildProcess, ProcessError, service_port

__all__ = ["RedisNode", "ReplicatedRedis"]


class RedisNode(ChildProcess):
    """One ``redis-server`` on 127.0.0.1:``port``, a replica of ``primary_port`` if given."""

    def __init__(self, root: Path, port: int, *, primary_port: int | None = None) -> None:
        self.port = port
        self.dir = root / f"redis-{port}"
        self.dir.mkdir(parents=True, exist_ok=True)
        server = shutil.which("redis-server")
        if server is None:
            raise ProcessError("redis-server is not installed (apt-get install -y redis-server)")
        argv = [
            server,
            "--bind", "127.0.0.1", "--port", str(port), "--dir", str(self.dir),
            "--appendonly", "yes", "--save", "", "--daemonize", "no",
        ]  # fmt: skip
        if primary_port is not None:
            argv += ["--replicaof", "127.0.0.1", str(primary_port)]
        super().__init__(argv, self.dir / "redis.log", name=f"redis {port}")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=5)

    def pause(self) -> None:
        """SIGSTOP: the node holds its connections and answers nothing, as a hung host."""
        self._started().send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._started().send_signal(signal.SIGCONT)

    def wait_ready(self, timeout: float = 20.0) -> None:
        """Until it answers PING (and, as a replica, has finished its first sync)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            client = self.client()
            try:
                info = client.info("replication")
                if info["role"] == "master" or info.get("master_link_status") == "up":
                    return
            except redis.RedisError:
                pass
            finally:
                client.close()
            time.sleep(0.1)
        raise ProcessError(f"{self.name} not ready in {timeout:.0f} s:\n{self.log_tail()}")


class ReplicatedRedis:
    """A primary and ``replicas`` replicas under ``root``; a context manager that stops them."""

    def __init__(self, root: Path, *, replicas: int = 1) -> None:
        self.primary = RedisNode(root, service_port())
        self.replicas = [
            RedisNode(root, service_port(), primary_port=self.primary.port) for _ in range(replicas)
        ]

    @property
    def nodes(self) -> list[RedisNode]:
        return [self.primary, *self.replicas]

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
        for node in self.nodes:
            if node.alive():
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
