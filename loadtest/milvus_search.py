"""Which vector index keeps a one-subject search exact as a collection grows, and how fast.

    python -m slotwise.loadtest.milvus_search --rows 150000 [--index FLAT|HNSW] [--isolation]

Fills a collection shaped like the fact index (``subject_id`` its partition key,
384-d unit vectors, ``--subjects`` subjects sharing the rows evenly) and, at
each checkpoint, times ``--searches`` searches filtered to one subject, as the
vector stage asks them. Each answer is checked against the subject's exact
top ``--k`` computed here: *recall* is the share of those found, *empty* the
share of searches that found none of a subject that has rows. Vectors are
seeded random, so the numbers are Milvus's alone. The collection is dropped
afterwards.
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from pymilvus import DataType, MilvusClient

from slotwise.loadtest.results import percentile
from slotwise.processors.drift_adapter import unit_rows
from slotwise.sinks.milvus.collections import GRPC_OPTIONS, READ_CONSISTENCY, of_subject
from slotwise.sinks.milvus.engine import hit_fact_id
from slotwise.streams.config import Settings

__all__ = ["Checkpoint", "main", "measure"]

_DIMENSION = 384
_BATCH = 1000


@dataclass(frozen=True, slots=True)
class Checkpoint:
    rows: int
    p50_ms: float
    p99_ms: float
    recall: float
    empty: float


def _unit_vectors(rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
    return unit_rows(rng.standard_normal((n, _DIMENSION)))


def _create(client: MilvusClient, name: str, index: str, isolation: bool) -> dict[str, Any]:
    """The collection, and the search parameters its index needs."""
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("fact_id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("subject_id", DataType.VARCHAR, max_length=64, is_partition_key=True)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=_DIMENSION)
    params = client.prepare_index_params()
    search: dict[str, Any] = {"metric_type": "COSINE"}
    if index == "HNSW":
        params.add_index(
            "vector",
            index_type="HNSW",
            metric_type="COSINE",
            params={"M": 16, "efConstruction": 128},
        )
        search["params"] = {"ef": 64}
    else:
        params.add_index("vector", index_type="FLAT", metric_type="COSINE")
    client.create_collection(
        name,
        schema=schema,
        index_params=params,
        properties={"partitionkey.isolation": True} if isolation else {},
        consistency_level=READ_CONSISTENCY,
    )
    return search


def measure(
    uri: str,
    *,
    token: str = "",
    rows: int,
    subjects: int,
    checkpoints: Sequence[int],
    searches: int,
    k: int,
    index: str,
    isolation: bool,
    seed: int = 1,
) -> list[Checkpoint]:
    rng = np.random.default_rng(seed)
    client = MilvusClient(uri=uri, token=token, grpc_options=GRPC_OPTIONS)
    name = f"bench{uuid.uuid4().hex[:8]}_search"
    search = _create(client, name, index, isolation)
    vectors = np.empty((rows, _DIMENSION), dtype=np.float32)
    written = 0
    found: list[Checkpoint] = []
    try:
        for target in sorted({min(c, rows) for c in (*checkpoints, rows)}):
            while written < target:
                n = min(_BATCH, target - written)
                vectors[written : written + n] = _unit_vectors(rng, n)
                client.insert(
                    name,
                    [
                        {
                            "fact_id": str(i),
                            "subject_id": f"s{i % subjects}",
                            "vector": vectors[i].tolist(),
                        }
                        for i in range(written, written + n)
                    ],
                )
                written += n
            client.flush(name)
            found.append(
                _searched(
                    client,
                    name,
                    search,
                    vectors[:written],
                    subjects=subjects,
                    searches=searches,
                    k=k,
                    rng=rng,
                )
            )
    finally:
        client.drop_collection(name)
        client.close()
    return found


def _searched(
    client: MilvusClient,
    name: str,
    search: dict[str, Any],
    written: npt.NDArray[np.float32],
    *,
    subjects: int,
    searches: int,
    k: int,
    rng: np.random.Generator,
) -> Checkpoint:
    millis: list[float] = []
    hits = wanted = empty = 0
    for query in _unit_vectors(rng, searches):
        subject = int(rng.integers(min(subjects, len(written))))
        started = time.perf_counter()
        result = client.search(
            name,
            data=[query.tolist()],
            limit=k,
            filter=of_subject(f"s{subject}"),
            search_params=search,
            consistency_level=READ_CONSISTENCY,
        )
        millis.append((time.perf_counter() - started) * 1000)
        rows = np.arange(subject, len(written), subjects)
        exact = {str(r) for r in rows[np.argsort(-(written[rows] @ query))[:k]]}
        got = {hit_fact_id(hit) for hit in result[0]}
        hits += len(exact & got)
        wanted += len(exact)
        empty += not got
    return Checkpoint(
        rows=len(written),
        p50_ms=percentile(millis, 50),
        p99_ms=percentile(millis, 99),
        recall=hits / wanted if wanted else 1.0,
        empty=empty / searches,
    )


def _row_counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated row counts: {text!r}") from None
    if any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError("row counts must be at least 1")
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m slotwise.loadtest.milvus_search", description=__doc__.split("\n\n")[0]
    )
    settings = Settings()
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else ""
    parser.add_argument("--uri", default=settings.milvus_uri)
    parser.add_argument("--token", default=token, help="default: SLOTWISE_MILVUS_TOKEN")
    parser.add_argument("--rows", type=int, default=150_000)
    parser.add_argument("--subjects", type=int, default=10_000)
    parser.add_argument(
        "--checkpoints", type=_row_counts, default="10000,50000", help="row counts, besides --rows"
    )
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--index", choices=("FLAT", "HNSW"), default="FLAT")
    parser.add_argument("--isolation", action="store_true", help="partitionkey.isolation on")
    args = parser.parse_args(argv)
    if min(args.rows, args.subjects, args.searches, args.k) < 1:
        parser.error("--rows, --subjects, --searches and --k must be at least 1")
    label = args.index + (" + partitionkey.isolation" if args.isolation else "")
    for point in measure(
        args.uri,
        token=args.token,
        rows=args.rows,
        subjects=args.subjects,
        checkpoints=args.checkpoints,
        searches=args.searches,
        k=args.k,
        index=args.index,
        isolation=args.isolation,
    ):
        print(
            f"{label}: {point.rows:>8,} rows  p50 {point.p50_ms:7.1f} ms"
            f"  p99 {point.p99_ms:7.1f} ms  recall {point.recall:.3f}  empty {point.empty:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
