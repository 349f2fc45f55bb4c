"""The local stack's Milvus: Lite (the default) or a Milvus standalone server.

``slotwise stack up --milvus server`` runs PyPI's ``milvus`` package instead of
Lite: ``milvus-server``, the Milvus 2.3 standalone binary (the engine of a
cluster, with embedded etcd, RocksMQ and local storage) behind a small Python
launcher. Only its gRPC proxy port is ours to choose; its internal ports (etcd,
the coordinators, metrics) are the first free ones from Milvus's defaults.

Which engine answers is read from the server itself (``Milvus.engine``), so
``stack status`` tells the truth even about a Milvus someone else started.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Literal

from slotwise.streams.dev.milvus_lite import Milvus
from slotwise.streams.dev.milvus_security import root_tokens
from slotwise.streams.dev.security import StackSecurity
from slotwise.streams.dev.services import Address, MissingTool

__all__ = ["MILVUS_ENGINES", "MilvusEngine", "MilvusServer", "milvus_service"]

MilvusEngine = Literal["lite", "server"]
MILVUS_ENGINES: tuple[MilvusEngine, ...] = ("lite", "server")

# The proxy publishes a new time tick every 200 ms by default, and a Strong read
# waits for the tick after it arrived: 390 ms p50 per search here. At 20 ms, a
# search waits tens of milliseconds instead; the ticks cost the idle server about
# 2% of a core more (deploy/local/README.md, *Milvus Lite and a Milvus server*).
_SERVER_CONFIG = {"proxy.timeTickInterval": "20"}


class MilvusServer(Milvus):
    marker = "milvus-server"
    start_timeout_s = 180.0  # ~40 s on two idle cores; more while the machine is busy

    def __init__(
        self, address: Address, data_dir: Path, uri: str, security: StackSecurity | None = None
    ) -> None:
        """``security``: authorization on, root and the users of ``milvus_security.py``."""
        super().__init__(address, data_dir, uri)
        self.security = security
        if security is not None:
            self.tokens = root_tokens(security)

    def preflight(self) -> None:
        self.command()

    def command(self) -> list[str]:
        server = shutil.which("milvus-server") or str(
            Path(sys.executable).with_name("milvus-server")
        )
        if not Path(server).exists():
            raise MissingTool(
                f"milvus-server is not installed for {sys.executable}: pip install 'milvus==2.3.5'"
            )
        extra = [
            arg
            for key, value in _SERVER_CONFIG.items()
            for arg in ("--extra-config", f"{key}={value}")
        ]
        return [
            server,
            "--data",
            str(self.workdir / "server"),
            "--proxy-port",
            str(self.address.port),
            *(["--authorization-enabled", "true"] if self.security else []),
            *extra,
        ]

    def stop(self, grace_s: float) -> bool:
        # The launcher exits at once on SIGTERM; the binary it started (same process
        # group) shuts down for seconds after. Wait for the group, then kill what is left.
        group = self.our_pid()
        if not super().stop(grace_s):
            return False
        if group is not None and _group_alive(group):
            os.killpg(group, signal.SIGTERM)  # the binary's own turn
        deadline = time.monotonic() + grace_s
        while group is not None and _group_alive(group):
            if time.monotonic() > deadline:
                os.killpg(group, signal.SIGKILL)
                deadline = time.monotonic() + grace_s
            time.sleep(0.2)
        return True


def milvus_service(
    engine: MilvusEngine,
    address: Address,
    data_dir: Path,
    uri: str,
    security: StackSecurity | None = None,
) -> Milvus:
    """Lite ignores ``security``: it has no authentication to turn on."""
    if engine == "server":
        return MilvusServer(address, data_dir, uri, security)
    return Milvus(address, data_dir, uri)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True
