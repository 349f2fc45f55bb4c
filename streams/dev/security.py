"""The secure local stack's secrets: a CA, the services' certificate, each principal's password.

``slotwise stack up --secure`` makes them once per data dir, under
``<data dir>/security/`` (mode 0700; the key and password files 0600), with
``openssl``; every later ``up`` reuses them, so a broker formatted with these
SCRAM credentials keeps accepting them. One server certificate (SAN: the
loopback names and addresses, ``localhost``) serves the broker and Redis; the
CA that signed it is all a client needs to trust them.

The principals are the same names in Kafka (SCRAM users), Redis (ACL users)
and, with ``--milvus server``, Milvus (``kafka_acls.py`` and ``deploy/local/README.md``
say what each may do). :meth:`StackSecurity.role_env` renders the ``SLOTWISE_*``
variables of one role, what ``slotwise stack env --role`` prints.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from slotwise.streams.dev.services import Address, StackError, require_program

__all__ = ["PRINCIPALS", "ROLES", "Principal", "Role", "StackSecurity"]

Principal = Literal["admin", "worker", "producer", "subscriber", "server"]
PRINCIPALS: tuple[Principal, ...] = get_args(Principal)
Role = Principal
ROLES: tuple[Role, ...] = PRINCIPALS
# The Redis user of each role that touches Redis: the worker writes, readers only read.
_REDIS_USER: dict[Role, str] = {"admin": "admin", "worker": "worker", "server": "reader"}
# Milvus (server engine only): the root account for the operator, a user for the others.
_MILVUS_USER: dict[Role, str] = {"admin": "root", "worker": "worker", "server": "server"}
REDIS_USERS: tuple[str, ...] = ("admin", "worker", "reader")
MILVUS_USERS: tuple[str, ...] = ("root", "worker", "server")
_DAYS = "3650"
_CA = "/CN=slotwise local CA"
_OPENSSL = "OpenSSL (Debian: apt-get install -y openssl)"


@dataclass(frozen=True, slots=True)
class StackSecurity:
    """The secrets of one data dir; :meth:`ensure` makes what is missing."""

    directory: Path
    kafka_passwords: dict[str, str]
    redis_passwords: dict[str, str]
    milvus_passwords: dict[str, str]
    keystore_password: str

    @property
    def ca(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def server_cert(self) -> Path:
        return self.directory / "server.pem"

    @property
    def server_key(self) -> Path:
        return self.directory / "server-key.pem"

    @property
    def keystore(self) -> Path:
        """The broker's certificate and key as PKCS#12 (the JDK reads it without a converter)."""
        return self.directory / "server.p12"

    @staticmethod
    def home(data_dir: Path) -> Path:
        return data_dir / "security"

    @classmethod
    def recorded(cls, data_dir: Path) -> StackSecurity | None:
        """The secrets a secure ``up`` made in ``data_dir``, or None: that stack is plain."""
        path = cls.home(data_dir) / "passwords.json"
        try:
            stored = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StackError(f"cannot read the stack's credentials {path}: {exc}") from None
        return cls(
            cls.home(data_dir),
            stored["kafka"],
            stored["redis"],
            stored["milvus"],
            stored["keystore"],
        )

    @classmethod
    def ensure(cls, data_dir: Path) -> StackSecurity:
        """The recorded secrets, or new ones (a CA, a server certificate, passwords)."""
        found = cls.recorded(data_dir)
        if found is not None:
            return found
        directory = cls.home(data_dir)
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        made = cls(
            directory,
            {p: _password() for p in PRINCIPALS},
            {u: _password() for u in REDIS_USERS},
            {u: _password() for u in MILVUS_USERS},
            _password(),
        )
        made._make_certificates()
        # Written last: its presence says the directory is complete.
        stored = {
            "kafka": made.kafka_passwords,
            "redis": made.redis_passwords,
            "milvus": made.milvus_passwords,
            "keystore": made.keystore_password,
        }
        _write_private(directory / "passwords.json", json.dumps(stored, indent=2) + "\n")
        return made

    def _make_certificates(self) -> None:
        openssl = require_program("openssl", _OPENSSL)
        d = self.directory
        ca_key = d / "ca-key.pem"
        san = "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"
        csr = d / "server.csr"
        steps: list[list[str | Path]] = [
            ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", ca_key],
            ["req", "-x509", "-new", "-key", ca_key, "-subj", _CA, "-days", _DAYS, "-out", self.ca],
            ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", self.server_key],
            ["req", "-new", "-key", self.server_key, "-subj", "/CN=localhost", "-out", csr],
            [
                *("x509", "-req", "-in", csr, "-CA", self.ca, "-CAkey", ca_key, "-sha256"),
                *("-CAcreateserial", "-days", _DAYS, "-extfile", d / "server.ext"),
                *("-out", self.server_cert),
            ],
            [
                *("pkcs12", "-export", "-in", self.server_cert, "-inkey", self.server_key),
                *("-name", "broker", "-passout", "env:SLOTWISE_KEYSTORE_PASSWORD"),
                *("-out", self.keystore),
            ],
        ]
        (d / "server.ext").write_text(f"{san}\nextendedKeyUsage=serverAuth,clientAuth\n")
        old = os.umask(0o077)  # keys and the keystore: readable by their owner only
        try:
            for step in steps:
                done = subprocess.run(
                    [openssl, *(str(arg) for arg in step)],
                    capture_output=True,
                    check=False,
                    env={**os.environ, "SLOTWISE_KEYSTORE_PASSWORD": self.keystore_password},
                )
                if done.returncode != 0:
                    raise StackError(
                        f"making the stack's certificates failed ({step[0]}): "
                        f"{done.stderr.decode(errors='replace').strip()}"
                    )
        finally:
            os.umask(old)
        # Redis reads its key as the user who runs it, which is the same user: 0600 holds.
        for leftover in ("server.csr", "server.ext", "ca.srl"):
            (d / leftover).unlink(missing_ok=True)

    def kafka_client(self, principal: Principal) -> dict[str, str]:
        """librdkafka's security settings of ``principal`` (no bootstrap servers)."""
        return {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": principal,
            "sasl.password": self.kafka_passwords[principal],
            "ssl.ca.location": str(self.ca),
        }

    def redis_url(self, address: Address, user: str, db: int = 0) -> str:
        password = self.redis_passwords[user]
        return f"rediss://{user}:{password}@{address}/{db}?ssl_ca_certs={self.ca}"

    def milvus_token(self, user: str) -> str:
        return f"{user}:{self.milvus_passwords[user]}"

    def role_env(
        self,
        role: Role,
        *,
        kafka_bootstrap: str,
        redis: Address,
        milvus_uri: str,
        milvus_auth: bool,
    ) -> dict[str, str]:
        """The ``SLOTWISE_*`` variables a process of ``role`` needs against this stack."""
        kafka = self.kafka_client(role)
        env = {
            "SLOTWISE_KAFKA_BOOTSTRAP": kafka_bootstrap,
            "SLOTWISE_KAFKA_SECURITY_PROTOCOL": kafka["security.protocol"],
            "SLOTWISE_KAFKA_SASL_MECHANISM": kafka["sasl.mechanism"],
            "SLOTWISE_KAFKA_SASL_USERNAME": kafka["sasl.username"],
            "SLOTWISE_KAFKA_SASL_PASSWORD": kafka["sasl.password"],
            "SLOTWISE_KAFKA_SSL_CA_LOCATION": kafka["ssl.ca.location"],
        }
        redis_user = _REDIS_USER.get(role)
        if redis_user is not None:
            env["SLOTWISE_REDIS_URL"] = self.redis_url(redis, redis_user)
        milvus_user = _MILVUS_USER.get(role)
        if milvus_user is not None:
            env["SLOTWISE_MILVUS_URI"] = milvus_uri
            if milvus_auth:
                env["SLOTWISE_MILVUS_TOKEN"] = self.milvus_token(milvus_user)
        return env


def _password() -> str:
    # URL-safe: it goes into rediss:// URLs and JAAS strings without quoting.
    return secrets.token_urlsafe(24)


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
