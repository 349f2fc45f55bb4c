"""The local stack's default Milvus: Milvus Lite behind its gRPC server, on loopback."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from slotwise.streams.dev.services import Address, MissingTool, Service

if TYPE_CHECKING:
    from pymilvus import MilvusClient

__all__ = ["Milvus"]


class Milvus(Service):
    name = "milvus"
    marker = "milvus_lite"
    start_timeout_s = 120.0

    tokens: tuple[str, ...] = ("",)
    """What to log in with, tried in turn: none for Lite (it has no authentication)."""

    def __init__(self, address: Address, data_dir: Path, uri: str) -> None:
        super().__init__(address, data_dir)
        self.uri = uri

    def healthy(self) -> bool:
        client = self._client()
        if client is None:
            return False
        client.close()
        return True

    def _client(self) -> MilvusClient | None:
        """A client logged in with the first of :attr:`tokens` that lists collections."""
        # pymilvus takes over a second to import: only `status` and `up` should pay for it.
        from pymilvus import MilvusClient  # noqa: PLC0415
        from pymilvus.exceptions import MilvusException  # noqa: PLC0415

        from slotwise.sinks.milvus.index import GRPC_OPTIONS  # noqa: PLC0415

        for token in self.tokens:
            try:
                client = MilvusClient(self.uri, token=token, timeout=2, grpc_options=GRPC_OPTIONS)
            except MilvusException:
                continue
            try:
                client.list_collections()
                return client
            except MilvusException:
                client.close()
        return None

    def engine(self) -> str | None:
        """``lite 3.2.2`` or ``server v2.3.5-lite`` (PyPI's standalone server calls itself
        that): what the Milvus at the URI reports, whoever started it."""
        from pymilvus.exceptions import MilvusException  # noqa: PLC0415

        from slotwise.sinks.milvus.engine import EngineTraits  # noqa: PLC0415

        client = self._client()
        if client is None:
            return None
        try:
            traits = EngineTraits.of_version(str(client.get_server_version(timeout=2)))
        except MilvusException:
            return None
        finally:
            client.close()
        return f"{traits.engine} {traits.version.removeprefix('milvus_lite-')}"

    def preflight(self) -> None:
        if importlib.util.find_spec("milvus_lite") is None:
            raise MissingTool(
                f"milvus-lite is not installed for {sys.executable}: pip install milvus-lite"
            )

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            # Lite's server, searching only the partition a filter's subject is in, as a
            # Milvus server does (streams/dev/milvus_lite_server.py).
            "slotwise.streams.dev.milvus_lite_server",
            "server",
            "--data-dir",
            str(self.workdir / "data"),
            "--host",
            self.address.host,
            "--port",
            str(self.address.port),
            # One RPC at a time. Milvus Lite 3.2's collection is not safe under concurrent
            # calls: its flush swaps in an empty memtable before the flushed segment is
            # visible, so a search during a flush (ours, or one a full memtable starts)
            # misses the rows of the memtable being written, and a replay would see other
            # neighbours than the first run did. Serialized, the server answered more
            # searches, not fewer, measured here (it is bound by one interpreter's lock).
            "--max-workers",
            "1",
        ]
