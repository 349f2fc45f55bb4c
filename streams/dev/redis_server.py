"""The local stack's Redis: ``redis-server`` from Debian, append-only, on loopback.

Secure (``slotwise stack up --secure``), it speaks TLS only, with the stack's
certificate (``security.py``), and knows no default user: ``admin`` may do
anything, ``worker`` every data command on every key, ``reader`` (the HTTP/MCP
server) only reads (scripts included: Redis checks each command a script runs).
"""

from __future__ import annotations

from pathlib import Path

import redis

from slotwise.streams.dev.security import StackSecurity
from slotwise.streams.dev.services import Address, Service, require_program

__all__ = ["Redis", "redis_acl"]

# Every connection of slotwise asks INFO for the server's run_id (sinks/redis/identity.py).
_READER = "+@read +@connection +info +evalsha +evalsha_ro +eval +eval_ro +script|load"
_ACL = {
    "admin": "~* &* +@all",
    "worker": "~* &* +@all -@admin -flushall -flushdb -shutdown",
    "reader": f"~* resetchannels -@all {_READER}",
}


def redis_acl(security: StackSecurity) -> str:
    """The ACL file of the secure Redis: no default user, the three of ``_ACL``."""
    users = "".join(
        f"user {name} on >{security.redis_passwords[name]} {rules}\n"
        for name, rules in _ACL.items()
    )
    return f"user default off\n{users}"


class Redis(Service):
    name = "redis"
    marker = "redis-server"
    start_timeout_s = 30.0

    def __init__(
        self, address: Address, data_dir: Path, url: str, security: StackSecurity | None = None
    ) -> None:
        super().__init__(address, data_dir)
        self.security = security
        self.url = security.redis_url(address, "admin") if security else url
        self.acl_path = self.workdir / "users.acl"

    def healthy(self) -> bool:
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1, socket_timeout=2)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def prepare(self) -> None:
        if self.security is not None:
            self.acl_path.touch(mode=0o600)
            self.acl_path.write_text(redis_acl(self.security))

    def command(self) -> list[str]:
        server = require_program("redis-server", "Debian: apt-get install -y redis-server")
        return [
            server,
            "--bind",
            self.address.host,
            *self._listener(),
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

    def _listener(self) -> list[str]:
        port = str(self.address.port)
        if self.security is None:
            return ["--port", port]
        return [
            "--port",
            "0",  # TLS only: no plain port at all
            "--tls-port",
            port,
            "--tls-cert-file",
            str(self.security.server_cert),
            "--tls-key-file",
            str(self.security.server_key),
            "--tls-ca-cert-file",
            str(self.security.ca),
            "--tls-auth-clients",
            "no",  # clients prove who they are with an ACL user, not a certificate
            "--aclfile",
            str(self.acl_path),
        ]
