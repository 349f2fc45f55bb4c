"""The local stack's Milvus Lite server, searching only the partition a subject's rows are in.

    python -m slotwise.streams.dev.milvus_lite_server server --data-dir DIR --host H --port P

A Milvus server reads a filter that pins the partition key (``subject_id ==
"user-42"``, which every search and count of ours carries) and scans only the
partition that key hashes to. Milvus Lite 3.2 hashes rows into its 16
partition-key buckets on insert but does not prune on search: every search
walks every segment and converts every unflushed row of the collection to
Python, so a subject's search slows with everyone's rows (docs/performance.md:
37 ms against 5.9 ms at 50,000 rows, the same hits). This entry point runs
Lite's own server with that pruning added to its ``search`` and ``query``:
when the filter's top-level conjunction holds ``<partition key> == "literal"``
and the caller named no partitions, the call names the literal's bucket.

The bucket is Lite's own formula (``Collection._insert_with_partition_key``),
so the pruning is tied to the Lite version it was checked against
(``_CHECKED``); any other version runs unpruned, exactly as ``python -m
milvus_lite`` would, and says so in its log. A Milvus server needs none of
this: ``SLOTWISE_MILVUS_URI`` pointed at one bypasses the local stack.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Any

import milvus_lite
from milvus_lite.cmdline import main as lite_main
from milvus_lite.constants import PARTITION_KEY_BUCKET_PREFIX
from milvus_lite.engine.collection import Collection
from milvus_lite.search.filter import parse_expr
from milvus_lite.search.filter.ast import And, CmpOp, FieldRef, StringLit

__all__ = ["bucket", "install_pruning", "main", "pinned_key"]

log = logging.getLogger(__name__)

# The Lite versions whose insert-side bucketing the pruning was checked against
# (tests/streams/dev/test_milvus_lite_server.py compares pruned with unpruned answers).
_CHECKED = ("3.2.",)


@functools.lru_cache(maxsize=4096)
def pinned_key(expr: str, field: str) -> str | None:
    """The string ``field`` must equal for a row to match ``expr``, if a top-level
    conjunct says so; None when the filter lets the field take other values, or
    does not parse (the call itself then reports why)."""
    try:
        node = parse_expr(expr)
    except Exception:  # Lite's parser raises its own errors, and the call will too
        return None
    terms = node.operands if isinstance(node, And) else (node,)
    for term in terms:
        if not isinstance(term, CmpOp) or term.op != "==":
            continue
        for side, other in ((term.left, term.right), (term.right, term.left)):
            if isinstance(side, FieldRef) and side.name == field and isinstance(other, StringLit):
                return str(other.value)
    return None


def bucket(key: str, buckets: int) -> str:
    """The partition Lite put the rows of partition key ``key`` in."""
    digest = int(hashlib.md5(key.encode()).hexdigest(), 16)  # Lite's hash, not security
    return f"{PARTITION_KEY_BUCKET_PREFIX}{digest % buckets}"


def _partitions(
    collection: Collection, expr: str | None, partition_names: Sequence[str] | None
) -> Sequence[str] | None:
    field = collection._partition_key_field
    if field is None or partition_names or not expr:
        return partition_names
    key = pinned_key(expr, field)
    if key is None:
        return partition_names
    return [bucket(key, collection._num_partition_buckets)]


def _pruning(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` with the partitions its filter pins filled in, however it is called."""
    signature = inspect.signature(method)

    @functools.wraps(method)
    def pruned(*args: Any, **kwargs: Any) -> Any:
        call = signature.bind(*args, **kwargs)
        given = call.arguments
        given["partition_names"] = _partitions(
            given["self"], given.get("expr"), given.get("partition_names")
        )
        return method(*call.args, **call.kwargs)

    return pruned


def install_pruning() -> bool:
    """Prune ``Collection.search`` and ``query`` by partition key; False on an unchecked Lite."""
    if not milvus_lite.__version__.startswith(_CHECKED):
        log.warning(
            "milvus-lite %s is not one the partition-key pruning was checked against (%s): "
            "searching every partition",
            milvus_lite.__version__,
            ", ".join(f"{v}x" for v in _CHECKED),
        )
        return False
    Collection.search = _pruning(Collection.search)
    Collection.query = _pruning(Collection.query)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    install_pruning()
    return int(lite_main(list(sys.argv[1:] if argv is None else argv)) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
