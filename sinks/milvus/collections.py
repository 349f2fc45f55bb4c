"""The Milvus side of the fact index: collection names, their schema, and filters.

Names: ``<prefix>_<model-slug>_<yyyymmdd>`` holds the facts of one
embedding model behind the alias; ``<prefix>_cold_<model-slug>`` its archived
facts. Every collection of a deployment starts with its prefix, which is how
erasure and migration find all of them, tiers and model versions added later
included. Each collection is stamped with the model that embedded it
(``slotwise.embedding_model`` property, and ``embedding_model`` on every row).

Filters are built here only: a subject id is user input and must stay one
string literal in a filter expression.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from pymilvus import DataType, MilvusClient
from pymilvus.milvus_client.index import IndexParams

from slotwise.sinks.exceptions import EmbeddingModelMismatch

__all__ = [
    "FIELDS",
    "GRPC_OPTIONS",
    "MODEL_PROPERTY",
    "READ_CONSISTENCY",
    "TEXT_BYTES",
    "among",
    "beyond",
    "check_model",
    "cold_collection_name",
    "collection_model",
    "collection_name",
    "create_collection",
    "ensure_collection",
    "fit_text",
    "model_slug",
    "of_subject",
    "subject_collections",
]

MODEL_PROPERTY = "slotwise.embedding_model"
FIELDS = ["fact_id", "subject_id", "embedding_model", "category", "text"]
TEXT_BYTES = 65535  # the VARCHAR maximum; the full text lives in Redis
_ID_BYTES = 1024  # Identifier allows 256 characters; VARCHAR lengths are bytes
_LABEL_BYTES = 256
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# What every slotwise read of a collection asks for: a search or query sees every
# write acknowledged before it. A Milvus server's default (Bounded) may miss the
# last seconds of writes, so the vector stage would decide on other neighbours
# than a replay of the same log (crash-equivalence), a tier move would skip a
# row just written, and an erasure could verify a subject empty while a row it
# had not seen yet remained. Milvus Lite reads its own writes either way.
READ_CONSISTENCY = "Strong"

# gRPC servers refuse client keep-alive pings more often than every 5 minutes
# (and any ping between calls) by default; pymilvus pings every 10 s, which
# the Milvus Lite server answers with GOAWAY "too_many_pings" and a dropped
# channel. Ping no more often than a default server allows.
GRPC_OPTIONS = {
    "grpc.keepalive_time_ms": 300_000,
    "grpc.keepalive_permit_without_calls": False,
}


def model_slug(model_name: str) -> str:
    """``all-MiniLM-L6-v2`` → ``all_minilm_l6_v2``: a valid part of a collection name."""
    slug = re.sub(r"[^a-z0-9]+", "_", model_name.lower()).strip("_")
    if not slug:
        raise ValueError(f"model name {model_name!r} has no letters or digits")
    return slug


def collection_name(prefix: str, model_name: str, created: datetime) -> str:
    return f"{prefix}_{model_slug(model_name)}_{created:%Y%m%d}"


def cold_collection_name(prefix: str, model_name: str) -> str:
    return f"{prefix}_cold_{model_slug(model_name)}"


def fit_text(text: str) -> str:
    """A fact's text as a row holds it (the VARCHAR bound; the full text lives in Redis)."""
    raw = text.encode()
    return text if len(raw) <= TEXT_BYTES else raw[:TEXT_BYTES].decode(errors="ignore")


def _literal(value: str) -> str:
    if _CONTROL.search(value):
        raise ValueError(f"{value!r} contains control characters")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def of_subject(subject_id: str) -> str:
    return f"subject_id == {_literal(subject_id)}"


def beyond(fact_id: str) -> str:
    """Fact ids sorting after ``fact_id``: a resumable scan's cursor."""
    return f"fact_id > {_literal(fact_id)}"


def among(fact_ids: Iterable[str]) -> str:
    return f"fact_id in [{', '.join(_literal(f) for f in fact_ids)}]"


def subject_collections(client: MilvusClient, prefix: str) -> list[str]:
    """Every collection of ``prefix`` holding subjects' rows: every model, both tiers.

    Found by name and schema, not from a list, so a model version or a tier added
    later is found too (erasure relies on it).
    """
    names = [n for n in client.list_collections() if n.startswith(f"{prefix}_")]
    return [
        n
        for n in names
        if any(f["name"] == "subject_id" for f in client.describe_collection(n)["fields"])
    ]


def create_collection(
    client: MilvusClient, name: str, *, model: str, dimension: int, timeout_s: float
) -> None:
    """A facts collection of one embedding model, ``subject_id`` its partition key.

    The index is FLAT (exact): a subject has tens to hundreds of rows. Under a
    one-subject filter on Milvus Lite, HNSW found 0.78 of the true top 5 at 150,000
    rows and was no faster (``python -m slotwise.loadtest.milvus_search``).
    """
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("fact_id", DataType.VARCHAR, is_primary=True, max_length=_ID_BYTES)
    schema.add_field("subject_id", DataType.VARCHAR, max_length=_ID_BYTES, is_partition_key=True)
    schema.add_field("embedding_model", DataType.VARCHAR, max_length=_LABEL_BYTES)
    schema.add_field("category", DataType.VARCHAR, max_length=_LABEL_BYTES, nullable=True)
    schema.add_field("text", DataType.VARCHAR, max_length=TEXT_BYTES)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dimension)
    client.create_collection(
        name,
        schema=schema,
        index_params=_vector_index(client),
        properties={MODEL_PROPERTY: model},
        # The default for readers that do not ask (an operator's own queries).
        # slotwise's reads ask on every call, so collections created before this
        # answer them strongly too.
        consistency_level=READ_CONSISTENCY,
        timeout=timeout_s,
    )


def _vector_index(client: MilvusClient) -> IndexParams:
    index = client.prepare_index_params()
    index.add_index("vector", index_type="FLAT", metric_type="COSINE")
    return index


def ensure_collection(
    client: MilvusClient, name: str, *, model: str, dimension: int, timeout_s: float
) -> None:
    """``create_collection`` unless ``name`` exists; its vector index if it has none.

    pymilvus creates a collection, then its index, then loads it, in three calls:
    a process killed between the first two leaves a collection without an index,
    which cannot be loaded. Skipping an existing collection would keep it so;
    this finishes it instead.
    """
    if not client.has_collection(name):
        create_collection(client, name, model=model, dimension=dimension, timeout_s=timeout_s)
    elif not client.list_indexes(name, field_name="vector"):
        client.create_index(name, _vector_index(client), timeout=timeout_s)


def collection_model(client: MilvusClient, name: str) -> str | None:
    """The model a collection is stamped with (None: created before stamps)."""
    stamped = client.describe_collection(name).get("properties", {}).get(MODEL_PROPERTY)
    return None if stamped is None else str(stamped)


def check_model(
    client: MilvusClient,
    name: str,
    *,
    model: str,
    dimension: int,
    via: str,
    querying: str | None = None,
) -> None:
    """Refuse a collection embedded by another model than ``model``, the searched space.

    ``via``: how it was reached; ``querying``: the query embedder, when an
    adapter maps its vectors into ``model``'s space.
    """
    described = client.describe_collection(name)
    stamped = described.get("properties", {}).get(MODEL_PROPERTY)
    if stamped is not None and stamped != model:
        source = querying or model
        queries = source if source == model else f"{source} mapped into {model} by an adapter"
        raise EmbeddingModelMismatch(
            f"{via} points at {name}, embedded with {stamped}, but queries are embedded with "
            f"{queries}: they would find near-random neighbours. Fit and enable an adapter "
            f"{source} -> {stamped} (slotwise migrate adapter fit, validate, enable), or run "
            "the embedder the collection was built with"
        )
    dims = [f["params"].get("dim") for f in described["fields"] if f["name"] == "vector"]
    if dims and int(dims[0]) != dimension:
        raise EmbeddingModelMismatch(
            f"{name} holds {dims[0]}-d vectors; {model} makes {dimension}-d ones"
        )
