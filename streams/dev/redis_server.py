"""The local stack's Redis: ``redis-server`` from Debian, append-only, on loopback."""

from __future__ import annotations

from pathlib import Path

import redis

from slotwise.streams.dev.services import Address, Service, require_program

__all__ = ["Redis"]


class Redis(Service):
    name = "redis"
    marker = "redis-server"
    start_timeout_s = 30.0

    def __init__(self, address: Address, data_dir: Path, url: str) -> None:
        super().__init__(address, data_dir)
        self.url = url

    def healthy(self) -> bool:
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1, socket_timeout=2)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def command(self) -> list[str]:
        server = require_program("redis-server", "Debian: apt-get install -y redis-server")
        return [
            server,
            "--bind",
            self.address.host,
            "--port",
            str(self.address.port),
            "--dir",
            str(self.workdir),
            "--appendonly",
            "yes",
            "--save",
            "",
            "--daemonize",
            "no",
            "--logfile",
            "",
        ]
