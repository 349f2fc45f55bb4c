"""What a Milvus engine can do, and writing rows the way each one accepts them.

slotwise runs on Milvus Lite (the default local stack) and on a Milvus server
(``slotwise stack up --milvus server``: PyPI's ``milvus`` 2.3, or a cluster). The
server 2.3 line differs in two ways that change what a write must send:

* **No nullable fields** (they arrived in 2.5). The schema still asks for a
  nullable ``category``; a 2.3 server ignores the flag and refuses a row whose
  category is None. Such a row is written with an empty category, which reads
  back as None (no category is ever the empty string).
* **Upsert ignores the partition key.** A 2.3 server routes an upserted row by
  the hash of its primary key, not of ``subject_id``, so a search filtered to
  the subject (which prunes to the subject's partition) never finds it;
  inserted rows land where the filter looks. There a write is a delete of the
  fact ids followed by an insert: the same end state, two calls instead of one.

And a search hit names its primary key ``id`` on a 2.3 server, ``fact_id`` on Lite.

deploy/local/README.md, *Milvus Lite and a Milvus server*, has the measurements.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pymilvus import MilvusClient

from slotwise.sinks.milvus.collections import among

__all__ = ["EngineTraits", "engine_traits", "hit_fact_id", "read_category", "write_rows"]

_VERSION = re.compile(r"v?(\d+)\.(\d+)")


@dataclass(frozen=True, slots=True)
class EngineTraits:
    version: str
    """What the engine reports, e.g. ``milvus_lite-3.2.2`` or ``v2.3.5-lite``."""
    lite: bool
    nullable_fields: bool
    upsert_by_partition_key: bool

    @property
    def engine(self) -> str:
        return "lite" if self.lite else "server"

    @classmethod
    def of_version(cls, version: str) -> EngineTraits:
        if version.startswith("milvus_lite"):
            return cls(version, lite=True, nullable_fields=True, upsert_by_partition_key=True)
        found = _VERSION.match(version)
        major_minor = (int(found[1]), int(found[2])) if found else (99, 0)
        return cls(
            version,
            lite=False,
            nullable_fields=major_minor >= (2, 5),
            upsert_by_partition_key=major_minor >= (2, 4),
        )


_known: weakref.WeakKeyDictionary[MilvusClient, EngineTraits] = weakref.WeakKeyDictionary()


def engine_traits(client: MilvusClient) -> EngineTraits:
    """The traits of the engine ``client`` talks to (asked once per client)."""
    traits = _known.get(client)
    if traits is None:
        traits = EngineTraits.of_version(str(client.get_server_version()))
        _known[client] = traits
    return traits


def read_category(row: Mapping[str, Any]) -> str | None:
    """A row's category: None for a null one and for the empty one a 2.3 server stores."""
    category = row.get("category")
    return str(category) if category else None


def hit_fact_id(hit: Mapping[str, Any]) -> str:
    """The fact id of a search hit, whichever key the engine put it under."""
    for key in ("fact_id", "id"):
        if key in hit:
            return str(hit[key])
    return str(hit["entity"]["fact_id"])


def write_rows(
    client: MilvusClient,
    collection: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    timeout_s: float | None,
) -> None:
    """Upsert ``rows`` by fact id, in the form the engine behind ``client`` accepts."""
    if not rows:
        return
    traits = engine_traits(client)
    data = [
        dict(r) if traits.nullable_fields else {**r, "category": r.get("category") or ""}
        for r in rows
    ]
    if traits.upsert_by_partition_key:
        client.upsert(collection, data, timeout=timeout_s)
        return
    client.delete(collection, filter=among(str(r["fact_id"]) for r in data), timeout=timeout_s)
    client.insert(collection, data, timeout=timeout_s)
