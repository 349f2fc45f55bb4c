"""The secure local Milvus server: its root password changed, a user per role that uses it.

Only the server engine (``--milvus server``) checks credentials; Milvus Lite has
none. The server starts with ``--authorization-enabled true`` and its factory
account ``root:Milvus``; the first secure ``up`` replaces that password with
the generated one and creates ``worker`` (the built-in ``admin`` role: it creates
collections, aliases and indexes) and ``server`` (a read-only role: describe,
load, search, query). Later ``up``s find root's password already changed and
only make sure the users and grants exist.
"""

from __future__ import annotations

from typing import Any

from slotwise.streams.dev.security import StackSecurity
from slotwise.streams.dev.services import StackError

__all__ = ["DEFAULT_ROOT", "READER_ROLE", "grant_users", "root_tokens"]

DEFAULT_ROOT = "root:Milvus"  # what every new Milvus server accepts
READER_ROLE = "slotwise_reader"
_READER_GLOBAL = ("DescribeCollection", "ShowCollections", "DescribeAlias", "ListAliases")
_READER_COLLECTION = (
    "Search",
    "Query",
    "Load",
    "GetLoadState",
    "GetLoadingProgress",
    "GetStatistics",
    "IndexDetail",
    "ShowPartitions",
    "HasPartition",
)


def root_tokens(security: StackSecurity) -> tuple[str, str]:
    """The tokens root may answer to: its own, then (before the first grant) the factory one."""
    return security.milvus_token("root"), DEFAULT_ROOT


def grant_users(security: StackSecurity, uri: str) -> None:
    """Change root's factory password, then make the ``worker`` and ``server`` users."""
    from pymilvus import MilvusClient  # noqa: PLC0415 - a second to import: secure `up` only
    from pymilvus.exceptions import MilvusException  # noqa: PLC0415

    root = security.milvus_passwords["root"]
    try:
        client = MilvusClient(uri, token=security.milvus_token("root"), timeout=10)
    except MilvusException:
        client = MilvusClient(uri, token=DEFAULT_ROOT, timeout=10)
        client.update_password("root", DEFAULT_ROOT.split(":", 1)[1], root)
        client.close()
        client = MilvusClient(uri, token=security.milvus_token("root"), timeout=10)
    try:
        _ensure_users(client, security)
    except MilvusException as exc:
        raise StackError(f"setting up Milvus users failed: {exc}") from None
    finally:
        client.close()


def _ensure_users(client: Any, security: StackSecurity) -> None:
    existing = set(client.list_users())
    for user in ("worker", "server"):
        if user not in existing:
            client.create_user(user, security.milvus_passwords[user])
    if READER_ROLE not in set(client.list_roles()):
        client.create_role(READER_ROLE)
    for privilege in _READER_GLOBAL:
        client.grant_privilege(READER_ROLE, "Global", privilege, "*")
    for privilege in _READER_COLLECTION:
        client.grant_privilege(READER_ROLE, "Collection", privilege, "*")
    client.grant_role("worker", "admin")
    client.grant_role("server", READER_ROLE)
