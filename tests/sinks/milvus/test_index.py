"""MilvusIndex against the real Milvus Lite server (``milvus_uri``).

Each test writes collections under its own name prefix and drops them after.
Tests about similarity use the real MiniLM embedder; the others use a tiny
deterministic hashing embedder, since only Milvus is under test there.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import math
import os
import random
import re
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
from pymilvus import MilvusClient
from pymilvus.client.utils import SciPyHelper

from slotwise.models.embedders import MiniLMEmbedder
from slotwise.processors.drift_adapter import DriftAdapter, fit_procrustes
from slotwise.processors.model import VectorRow
from slotwise.processors.ports import Embedder
from slotwise.sinks.exceptions import EmbeddingModelMismatch, VectorIndexError
from slotwise.sinks.milvus import client as milvus_client
from slotwise.sinks.milvus import search as milvus_search
from slotwise.sinks.milvus.engine import engine_traits, read_category
from slotwise.sinks.milvus.erasure import MilvusErasure
from slotwise.sinks.milvus.index import FOREIGN_RESULTS, MilvusIndex
from slotwise.sinks.milvus.tiers import MilvusTiers

pytestmark = pytest.mark.milvus

T = TypeVar("T")
CREATED = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
# How long the visibility test writes and searches; a miss ends it sooner.
VISIBILITY_SECONDS = float(os.environ.get("SLOTWISE_VISIBILITY_SECONDS", "15"))
JOB_TEXTS = ["Works at Datadog.", "Starts at Stripe on Monday.", "Lives in Lisbon.", "Is vegan."]


class HashEmbedder:
    """Bag of hashed words, unit length: equal texts embed equally, nothing more."""

    def __init__(self, model_name: str = "test-hash-v1", dimension: int = 32) -> None:
        self.model_name = model_name
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = []
        for text in texts:
            row = [0.0] * self._dimension
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.sha256(word.encode()).digest()
                row[int.from_bytes(digest[:4], "big") % self._dimension] += 1.0
            norm = math.sqrt(sum(v * v for v in row)) or 1.0
            rows.append([v / norm for v in row])
        return rows


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture
def prefix(milvus_uri: str) -> Iterator[str]:
    name = f"t{uuid.uuid4().hex[:10]}"
    yield name
    _drop_prefix(milvus_uri, name)


def _drop_prefix(uri: str, prefix: str) -> None:
    client = MilvusClient(uri=uri)
    for alias in client.list_aliases().get("aliases", []):
        if alias.startswith(f"{prefix}_"):
            client.drop_alias(alias)
    for name in client.list_collections():
        if name.startswith(f"{prefix}_"):
            client.drop_collection(name)
    client.close()


def index_of(
    uri: str, prefix: str, embedder: Embedder | None = None, **options: object
) -> MilvusIndex:
    return MilvusIndex(
        uri,
        embedder or HashEmbedder(),
        alias=f"{prefix}_current",
        prefix=prefix,
        clock=lambda: CREATED,
        **options,  # type: ignore[arg-type]
    )


def run(index: MilvusIndex, scenario: Callable[[MilvusIndex], Awaitable[T]]) -> T:
    async def main() -> T:
        try:
            await index.setup()
            return await scenario(index)
        finally:
            await index.close()

    return asyncio.run(main())


def row(fact_id: str, subject_id: str, text: str, category: str | None = "misc") -> VectorRow:
    return VectorRow(fact_id=fact_id, subject_id=subject_id, text=text, category=category)


def test_setup_creates_the_model_collection_and_the_alias_once(
    milvus_uri: str, prefix: str
) -> None:
    async def scenario(index: MilvusIndex) -> str | None:
        await index.setup()
        return index.collection

    first = run(index_of(milvus_uri, prefix), scenario)
    assert first == f"{prefix}_test_hash_v1_20260314"
    # A later start on another day reuses what the alias points at.
    later = MilvusIndex(
        milvus_uri,
        HashEmbedder(),
        alias=f"{prefix}_current",
        prefix=prefix,
        clock=lambda: datetime(2026, 4, 1, tzinfo=UTC),
    )
    assert run(later, scenario) == first

    client = MilvusClient(uri=milvus_uri)
    described = client.describe_collection(first)
    assert client.describe_alias(f"{prefix}_current")["collection_name"] == first
    assert [n for n in client.list_collections() if n.startswith(prefix)] == [first]
    # A Milvus 2.3 server has no nullable fields: a missing category is written empty.
    nullable = engine_traits(client).nullable_fields
    client.close()
    fields = {f["name"]: f for f in described["fields"]}
    assert fields["fact_id"].get("is_primary") and not described["auto_id"]
    assert fields["subject_id"].get("is_partition_key")
    assert bool(fields["category"].get("nullable")) == nullable
    assert fields["vector"]["params"]["dim"] == 32
    assert {"embedding_model", "text"} <= fields.keys()


def test_replicas_starting_together_set_up_one_collection(milvus_uri: str, prefix: str) -> None:
    async def main() -> list[str | None]:
        replicas = [index_of(milvus_uri, prefix) for _ in range(4)]
        try:
            await asyncio.gather(*(r.setup() for r in replicas))
            return [r.collection for r in replicas]
        finally:
            await asyncio.gather(*(r.close() for r in replicas))

    # Each has its own client, as separate processes would: the losers of the
    # create race (Milvus Lite: "File exists") look again instead of failing.
    assert asyncio.run(main()) == [f"{prefix}_test_hash_v1_20260314"] * 4


def test_setup_refuses_a_collection_of_another_model(milvus_uri: str, prefix: str) -> None:
    async def nothing(index: MilvusIndex) -> None:
        return None

    run(index_of(milvus_uri, prefix), nothing)
    # The refusal names both models and the way out.
    with pytest.raises(EmbeddingModelMismatch, match=r"test-hash-v1.*test-hash-v2.*adapter"):
        run(index_of(milvus_uri, prefix, HashEmbedder("test-hash-v2")), nothing)
    with pytest.raises(EmbeddingModelMismatch, match="32-d"):
        other_dim = HashEmbedder(dimension=16)
        run(index_of(milvus_uri, prefix, other_dim), nothing)


class RotatedEmbedder:
    """Another "model": the hash embedder's vectors turned into a larger space, seeded."""

    def __init__(self, model_name: str = "test-hash-v2", dimension: int = 48) -> None:
        self.model_name = model_name
        self._inner = HashEmbedder()
        q, _ = np.linalg.qr(np.random.default_rng(14).normal(size=(dimension, dimension)))
        self._basis = q[: self._inner.dimension]

    @property
    def dimension(self) -> int:
        return int(self._basis.shape[1])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows: list[list[float]] = (np.asarray(self._inner.embed(texts)) @ self._basis).tolist()
        return rows


WORDS = "lisbon porto berlin stripe datadog vegan dog cat piano spanish tea chess".split()


def adapter_between(old: Embedder, new: Embedder) -> DriftAdapter:
    """A Procrustes adapter new → old, fitted on pairs of a few hundred texts."""
    rng = np.random.default_rng(3)
    texts = [" ".join(rng.choice(WORDS, 3)) for _ in range(300)]
    return fit_procrustes(
        new.embed(texts),
        old.embed(texts),
        source_model=new.model_name,
        target_model=old.model_name,
    )


def test_a_new_model_searches_the_old_collection_through_an_adapter_for_the_pair(
    milvus_uri: str, prefix: str
) -> None:
    sid = f"user-{uuid.uuid4()}"
    old, new = HashEmbedder(), RotatedEmbedder()
    adapter = adapter_between(old, new)
    facts = [row("home", sid, "lisbon porto"), row("job", sid, "stripe datadog")]

    async def before(index: MilvusIndex) -> list[tuple[str, float]]:
        index.add(facts)
        await index.flush()
        return await index.nearest(sid, "porto lisbon tea", k=5, floor=-1.0)

    async def bridged(index: MilvusIndex) -> tuple[list[tuple[str, float]], list[str]]:
        hits = await index.nearest(sid, "porto lisbon tea", k=5, floor=-1.0)
        # An erasure's text search goes through the same space: it finds the old rows.
        erasure = MilvusErasure(milvus_uri, index.space_embedder, prefix=prefix)
        found = await erasure.nearest_to_texts(sid, ["lisbon porto"], k=1)
        await erasure.close()
        assert list(found.values()) == [[("home", "lisbon porto")]]
        index.add([row("pet", sid, "dog cat")])
        await index.flush()
        client = MilvusClient(uri=milvus_uri)
        stamps = client.query(
            index.collection or "",
            filter=f'subject_id == "{sid}"',
            output_fields=["fact_id", "embedding_model"],
        )
        client.close()
        return hits, sorted(f"{r['fact_id']}={r['embedding_model']}" for r in stamps)

    old_hits = run(index_of(milvus_uri, prefix, old), before)
    hits, stamps = run(index_of(milvus_uri, prefix, new, adapter=adapter), bridged)
    assert [f for f, _ in hits] == [f for f, _ in old_hits] == ["home", "job"]
    assert [s for _, s in hits] == pytest.approx([s for _, s in old_hits], abs=1e-3)
    # A row written through the adapter says so: it is not the old model's vector.
    assert stamps == ["home=test-hash-v1", "job=test-hash-v1", f"pet={adapter.stamp}"]


def test_an_adapter_for_another_pair_is_refused(milvus_uri: str, prefix: str) -> None:
    async def nothing(index: MilvusIndex) -> None:
        return None

    old, new = HashEmbedder(), RotatedEmbedder()
    run(index_of(milvus_uri, prefix, old), nothing)
    elsewhere = adapter_between(HashEmbedder("test-hash-v0"), new)
    with pytest.raises(EmbeddingModelMismatch, match=r"test-hash-v1.*mapped into test-hash-v0"):
        run(index_of(milvus_uri, prefix, new, adapter=elsewhere), nothing)
    with pytest.raises(EmbeddingModelMismatch, match="the embedder is test-hash-v1"):
        index_of(milvus_uri, prefix, old, adapter=adapter_between(old, new))


def test_flush_upserts_buffered_rows_idempotently_by_fact_id(milvus_uri: str, prefix: str) -> None:
    sid = f"user-{uuid.uuid4()}"

    async def scenario(index: MilvusIndex) -> list[dict[str, object]]:
        index.add([row("f1", sid, "User works at Datadog.", "job"), row("f2", sid, "Likes tea.")])
        assert index.pending == 2
        await index.flush()
        assert index.pending == 0
        # A replay and an UPDATE re-send rows: still one row per fact.
        index.add([row("f1", sid, "User works at Datadog as an SRE.", None)])
        index.add([row("f2", sid, "Likes tea.")])
        await index.flush()
        assert await index.count_subject(sid) == 2
        client = MilvusClient(uri=milvus_uri)
        found = client.query(
            f"{prefix}_current",
            filter='fact_id == "f1"',
            output_fields=["subject_id", "embedding_model", "category", "text"],
        )
        client.close()
        return [dict(r) for r in found]

    [stored] = run(index_of(milvus_uri, prefix), scenario)
    assert stored["subject_id"] == sid
    assert stored["embedding_model"] == "test-hash-v1"
    assert read_category(stored) is None  # a 2.3 server stores it empty
    assert stored["text"] == "User works at Datadog as an SRE."


def test_nearest_ranks_the_subjects_facts_by_meaning(
    milvus_uri: str, prefix: str, minilm: MiniLMEmbedder
) -> None:
    sid = f"user-{uuid.uuid4()}"

    async def scenario(index: MilvusIndex) -> list[tuple[str, float]]:
        index.add(
            [
                row("job", sid, "User works at Datadog."),
                row("diet", sid, "User is vegetarian."),
                row("pet", sid, "User has a dog named Rex."),
            ]
        )
        await index.flush()
        return await index.nearest(sid, "User works at Stripe.", k=5, floor=-1.0)

    hits = run(index_of(milvus_uri, prefix, minilm), scenario)
    assert [fact_id for fact_id, _ in hits][:1] == ["job"]
    assert len(hits) == 3
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    assert 0.3 < scores[0] <= 1.0


def test_floor_drops_weak_neighbours(milvus_uri: str, prefix: str, minilm: MiniLMEmbedder) -> None:
    sid = f"user-{uuid.uuid4()}"

    async def scenario(index: MilvusIndex) -> tuple[list[str], list[str]]:
        index.add(
            [row("job", sid, "User works at Datadog."), row("diet", sid, "User is vegetarian.")]
        )
        await index.flush()
        meat = await index.nearest(sid, "I do not eat meat.", k=5, floor=0.3)
        weather = await index.nearest(sid, "The weather is nice today.", k=5, floor=0.3)
        return [f for f, _ in meat], [f for f, _ in weather]

    meat, weather = run(index_of(milvus_uri, prefix, minilm), scenario)
    assert meat == ["diet"]
    assert weather == []


def test_nearest_sees_the_subjects_own_unflushed_rows(milvus_uri: str, prefix: str) -> None:
    mine, theirs = f"user-{uuid.uuid4()}", f"user-{uuid.uuid4()}"

    async def scenario(index: MilvusIndex) -> tuple[list[tuple[str, float]], int]:
        index.add([row("a1", mine, "Lives in Lisbon."), row("b1", theirs, "Lives in Porto.")])
        hits = await index.nearest(mine, "Lives in Lisbon.", k=5, floor=0.0)
        return hits, index.pending

    hits, pending = run(index_of(milvus_uri, prefix), scenario)
    assert [f for f, _ in hits] == ["a1"] and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    # A search writes nothing: the buffered rows wait for the commit's flush.
    assert pending == 2


def test_excluded_rows_take_no_place_in_a_search_written_or_buffered(
    milvus_uri: str, prefix: str, minilm: MiniLMEmbedder
) -> None:
    sid = f"user-{uuid.uuid4()}"

    async def scenario(index: MilvusIndex) -> tuple[list[tuple[str, float]], ...]:
        index.add([row(f"f{i}", sid, t) for i, t in enumerate(JOB_TEXTS)])
        await index.flush()
        index.add([row("b0", sid, "Works at Stripe now.")])
        full = await index.nearest(sid, "Works at Stripe.", k=4, floor=-1.0)
        top = {full[0][0], full[1][0]}
        past = await index.nearest(sid, "Works at Stripe.", k=2, floor=-1.0, exclude=top)
        return full, past

    full, past = run(index_of(milvus_uri, prefix, minilm), scenario)
    assert "b0" in {f for f, _ in full[:2]}  # a buffered row among the excluded
    # Ranked as if the excluded rows were not there: the next two, not fewer.
    assert past == full[2:4]


def test_a_ranking_is_the_same_before_and_after_the_rows_are_written(
    milvus_uri: str, prefix: str, minilm: MiniLMEmbedder
) -> None:
    sid = f"user-{uuid.uuid4()}"

    async def scenario(index: MilvusIndex) -> tuple[list[tuple[str, float]], ...]:
        index.add([row(f"f{i}", sid, t) for i, t in enumerate(JOB_TEXTS)])
        buffered = await index.nearest(sid, "Works at Stripe.", k=3, floor=-1.0)
        await index.flush()
        written = await index.nearest(sid, "Works at Stripe.", k=3, floor=-1.0)
        index.add([row("f0", sid, "Is allergic to peanuts.")])  # a newer version of f0
        replaced = await index.nearest(sid, "Works at Stripe.", k=3, floor=-1.0)
        return buffered, written, replaced

    buffered, written, replaced = run(index_of(milvus_uri, prefix, minilm), scenario)
    # Bit for bit: a crash moves the moment rows are written, never a decision.
    assert buffered == written and len(written) == 3
    assert "f0" in {f for f, _ in written} and "f0" not in {f for f, _ in replaced}


def test_a_tie_at_the_limit_is_cut_by_fact_id_wherever_milvus_keeps_the_rows(
    milvus_uri: str, prefix: str
) -> None:
    """Milvus cuts a tie at the limit by the rows' place in its segments, and a row
    written again (as an index heal rewrites one) moves: the search must not."""
    sid = f"user-{uuid.uuid4()}"
    tied = [row(f"t{i}", sid, "Ran a marathon last year.") for i in range(3)]

    async def scenario(index: MilvusIndex) -> tuple[list[tuple[str, float]], ...]:
        index.add([row("near", sid, "Ran a marathon in Paris last year."), *tied])
        await index.flush()
        first = await index.nearest(sid, "Ran a marathon in Paris last year.", k=2, floor=-1.0)
        index.add([row("t0", sid, "Ran a marathon last year.")])  # the same row, written again
        await index.flush()
        again = await index.nearest(sid, "Ran a marathon in Paris last year.", k=2, floor=-1.0)
        return first, again

    # Every write sealed in a segment, so the row written again lies after the others.
    first, again = run(
        index_of(milvus_uri, prefix, flush_every=1, min_flush_interval_s=0), scenario
    )
    assert [f for f, _ in first] == ["near", "t0"]
    assert again == first


def test_a_written_row_stays_in_every_search_while_milvus_flushes(
    milvus_uri: str, prefix: str
) -> None:
    """Rows whose write returned, searched while others are written and Milvus flushes.

    Against a server that takes concurrent calls, a search during a flush missed the
    rows being flushed (Milvus Lite 3.2, about one search in 500 here): a replay then
    decides on other neighbours than the first run. The stack serves one call at a time.
    """
    subjects = [f"user-{n}" for n in range(20)]
    written: dict[str, set[str]] = {s: set() for s in subjects}
    deadline = time.monotonic() + VISIBILITY_SECONDS
    misses: list[str] = []

    async def write(index: MilvusIndex) -> None:
        for n in itertools.count():
            if time.monotonic() > deadline or misses:
                return
            sid = subjects[n % len(subjects)]
            rows = [row(f"{sid}-{n}-{i}", sid, f"Fact {n} {i} of {sid}.") for i in range(5)]
            index.add(rows)
            # Upserted; every fifth write also flushes Milvus (flush_every=25), with the
            # rows of the four before it still in the server's memtable.
            await index.flush()
            written[sid] |= {r.fact_id for r in rows}

    async def search(index: MilvusIndex, seed: int) -> int:
        rng = random.Random(seed)
        searches = 0
        while time.monotonic() < deadline and not misses:
            sid = rng.choice(subjects)
            want = set(written[sid])
            if not want:
                await asyncio.sleep(0)
                continue
            found = await index.nearest(sid, "Fact of the user.", k=16_000, floor=-1.0)
            searches += 1
            missing = want - {f for f, _ in found}
            if missing:
                misses.append(f"{sid}: {len(missing)} of {len(want)} written rows not found")
        return searches

    async def scenario(index: MilvusIndex) -> int:
        writer = asyncio.create_task(write(index))
        counts = await asyncio.gather(*(search(index, seed) for seed in range(3)))
        await writer
        return sum(counts)

    index = index_of(milvus_uri, prefix, flush_every=25, min_flush_interval_s=0.0, threads=4)
    searches = run(index, scenario)
    assert not misses, misses
    assert searches > 100  # the searches ran alongside the flushes


def test_a_search_never_returns_another_subjects_rows(milvus_uri: str, prefix: str) -> None:
    subjects = [f"user-{uuid.uuid4()}" for _ in range(3)]
    texts = ["User works at Datadog.", "User is vegetarian.", "User lives in Lisbon."]

    async def scenario(index: MilvusIndex) -> dict[str, set[str]]:
        index.add([row(f"{s}/{i}", s, t) for s in subjects for i, t in enumerate(texts)])
        await index.flush()
        seen: dict[str, set[str]] = {}
        for s in subjects:
            for text in texts:
                hits = await index.nearest(s, text, k=20, floor=-1.0)
                seen.setdefault(s, set()).update(f for f, _ in hits)
        return seen

    seen = run(index_of(milvus_uri, prefix), scenario)
    for s in subjects:
        assert seen[s] == {f"{s}/{i}" for i in range(3)}


def test_hits_of_another_subject_are_dropped_and_counted(
    milvus_uri: str, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine, theirs = f"user-{uuid.uuid4()}", f"user-{uuid.uuid4()}"
    # Defence in depth: even if the filter were wrong, no foreign row gets out.
    monkeypatch.setattr(milvus_search, "of_subject", lambda subject_id: "")
    before = FOREIGN_RESULTS._value.get()

    async def scenario(index: MilvusIndex) -> list[tuple[str, float]]:
        index.add([row("a1", mine, "Likes jazz."), row("b1", theirs, "Likes jazz.")])
        await index.flush()
        return await index.nearest(mine, "Likes jazz.", k=5, floor=-1.0)

    hits = run(index_of(milvus_uri, prefix), scenario)
    assert [f for f, _ in hits] == ["a1"]
    assert FOREIGN_RESULTS._value.get() == before + 1


@pytest.mark.parametrize(
    "subject_id",
    ['us"er', "us'er", "us\\er", 'us\\"er', 'x" or subject_id != "', "x' || 1 == 1 || '"],
)
def test_quotes_and_backslashes_in_subject_ids_stay_inside_the_filter(
    milvus_uri: str, prefix: str, subject_id: str
) -> None:
    other = "us"

    async def scenario(index: MilvusIndex) -> tuple[list[str], int, int]:
        index.add([row("mine", subject_id, "Likes jazz."), row("other", other, "Likes jazz.")])
        await index.flush()
        hits = await index.nearest(subject_id, "Likes jazz.", k=5, floor=-1.0)
        count = await index.count_subject(subject_id)
        deleted = await index.delete_subject(subject_id)
        return [f for f, _ in hits], count, deleted + 10 * await index.count_subject(other)

    hits, count, deleted = run(index_of(milvus_uri, prefix), scenario)
    assert hits == ["mine"]
    assert count == 1
    assert deleted == 1 + 10


def test_archive_moves_rows_to_the_cold_tier_and_restore_brings_them_back(
    milvus_uri: str, prefix: str
) -> None:
    sid = f"user-{uuid.uuid4()}"

    async def scenario(index: MilvusIndex) -> None:
        index.add([row("f1", sid, "Likes jazz."), row("f2", sid, "Owns a bike.")])
        assert await index.archive(sid, ["f1", "unknown"]) == 1
        assert [f for f, _ in await index.nearest(sid, "Likes jazz.", k=5, floor=0.5)] == []
        cold = await index.nearest(sid, "Likes jazz.", k=5, floor=0.5, tier="cold")
        assert [f for f, _ in cold] == ["f1"]
        assert await index.count_subject(sid) == 2
        assert await index.restore(sid, ["f1"]) == 1
        assert [f for f, _ in await index.nearest(sid, "Likes jazz.", k=5, floor=0.5)] == ["f1"]
        assert await index.nearest(sid, "Likes jazz.", k=5, floor=0.5, tier="cold") == []

    run(index_of(milvus_uri, prefix), scenario)


READS = ("search", "query", "query_iterator", "get")


def noting_client(asked: list[tuple[str, object]]) -> type[MilvusClient]:
    """The real client, noting in ``asked`` the consistency level that each read, and each
    collection created, asks Milvus for."""

    def noting(name: str) -> Callable[..., object]:
        real = getattr(MilvusClient, name)

        def call(self: MilvusClient, *args: object, **kwargs: object) -> object:
            asked.append((name, kwargs.get("consistency_level")))
            return real(self, *args, **kwargs)

        return call

    return type(
        "NotingClient", (MilvusClient,), {n: noting(n) for n in (*READS, "create_collection")}
    )


@pytest.fixture
def consistency_asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """:func:`noting_client` where the sinks open every client (``sinks/milvus/client.py``)."""
    asked: list[tuple[str, object]] = []
    monkeypatch.setattr(milvus_client, "MilvusClient", noting_client(asked))
    return asked


def test_every_read_and_every_collection_asks_for_strong_consistency(
    milvus_uri: str, prefix: str, consistency_asked: list[tuple[str, object]]
) -> None:
    # A Milvus server's default (Bounded) may answer without the last seconds of
    # writes: the vector stage would then decide on other neighbours than a replay,
    # and an erasure could verify a subject empty too early. Milvus Lite always
    # reads its own writes, so what each call asks for is what is checked.
    sid = f"user-{uuid.uuid4()}"
    embedder = HashEmbedder()

    async def scenario(index: MilvusIndex) -> None:
        index.add([row("f1", sid, "Likes jazz."), row("f2", sid, "Owns a bike.")])
        await index.flush()
        assert [f for f, _ in await index.nearest(sid, "Likes jazz.", k=1, floor=0.5)] == ["f1"]
        assert await index.count_subject(sid) == 2
        assert await index.archive(sid, ["f1"]) == 1
        tiers = MilvusTiers(index, embedder, uri=milvus_uri)
        assert (await tiers.locate(["f1"]))["f1"] == {"cold"}
        assert await tiers.subject_of("f1") == sid
        assert set((await tiers.rows_of(sid))["hot"]) == {"f2"}
        await tiers.close()
        erasure = MilvusErasure(milvus_uri, embedder, prefix=prefix)
        assert sum((await erasure.count(sid, None)).values()) == 2
        assert sum(map(len, (await erasure.rows_with_text(sid, ["Owns a bike."])).values())) == 1
        assert await erasure.nearest_to_texts(sid, ["Owns a bike."], k=1)
        await erasure.close()

    run(index_of(milvus_uri, prefix, embedder), scenario)
    assert {name for name, _ in consistency_asked} == {*READS, "create_collection"}
    assert {level for _, level in consistency_asked} == {"Strong"}


def test_delete_subject_covers_every_model_both_tiers_and_the_buffer(
    milvus_uri: str, prefix: str
) -> None:
    sid, kept = f"user-{uuid.uuid4()}", f"user-{uuid.uuid4()}"
    old_model = index_of(milvus_uri, prefix)
    new_model = MilvusIndex(
        milvus_uri,
        HashEmbedder("test-hash-v2", dimension=48),
        alias=f"{prefix}_next",
        prefix=prefix,
        clock=lambda: CREATED,
    )

    async def scenario(index: MilvusIndex) -> tuple[int, int, int, int]:
        await new_model.setup()
        for target in (index, new_model):
            target.add([row("f1", sid, "Likes jazz."), row("f2", sid, "Owns a bike.")])
            target.add([row("k1", kept, "Likes jazz.")])
            await target.flush()
        await index.archive(sid, ["f2"])
        index.add([row("f3", sid, "Not yet written.")])
        before = await index.count_subject(sid)
        deleted = await index.delete_subject(sid)
        after = await index.count_subject(sid) + await new_model.count_subject(sid)
        await index.flush()  # the erased subject's buffered row must not come back
        after += await index.count_subject(sid)
        others = await index.count_subject(kept)
        await new_model.close()
        return before, deleted, after, others

    before, deleted, after, others = run(old_model, scenario)
    assert before == deleted == 5  # 2 per model (one of them archived) + 1 buffered
    assert after == 0
    assert others == 2


def test_a_failed_flush_raises_and_keeps_the_buffer() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    index = MilvusIndex(f"http://127.0.0.1:{port}", HashEmbedder(), timeout_s=2.0)

    async def scenario() -> None:
        index.add([row("f1", "user-1", "Likes jazz.")])
        with pytest.raises(VectorIndexError):
            await index.flush()
        assert index.pending == 1

    asyncio.run(scenario())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _start_server(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    milvus_lite = shutil.which("milvus-lite")
    assert milvus_lite, "the milvus-lite command is not installed"
    server = subprocess.Popen(
        [
            milvus_lite,
            "server",
            "--data-dir",
            str(data_dir),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise AssertionError(f"milvus-lite did not listen on {port}")


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


@pytest.mark.slow
def test_a_flush_failing_mid_run_keeps_the_buffer_until_milvus_is_back(tmp_path: Path) -> None:
    port = _free_port()
    server = _start_server(tmp_path, port)
    index = MilvusIndex(
        f"http://127.0.0.1:{port}", HashEmbedder(), clock=lambda: CREATED, timeout_s=3.0
    )

    async def scenario() -> tuple[int, int]:
        nonlocal server
        await index.setup()
        index.add([row("f1", "user-1", "Likes jazz.")])
        await index.flush()
        _stop(server)
        index.add([row("f2", "user-1", "Owns a bike."), row("f3", "user-2", "Likes tea.")])
        with pytest.raises(VectorIndexError) as failed:
            await index.flush()
        assert failed.value.pending == 2 and index.pending == 2
        server = _start_server(tmp_path, port)
        # As the worker does: retry the commit until the dependency is back.
        for _ in range(20):
            try:
                await index.flush()
                break
            except VectorIndexError:
                await asyncio.sleep(0.5)
        return index.pending, await index.count_subject("user-1")

    try:
        pending, count = asyncio.run(scenario())
    finally:
        asyncio.run(index.close())
        _stop(server)
    assert pending == 0
    assert count == 2


class SlowFirstVersionEmbedder(HashEmbedder):
    """Takes its time over texts marked "slow", as a big batch would."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if any("slow" in t for t in texts):
            time.sleep(0.5)
        return super().embed(texts)


def test_a_row_replaced_while_it_was_embedded_is_not_written_over_its_successor(
    milvus_uri: str, prefix: str
) -> None:
    sid = f"user-{uuid.uuid4()}"

    async def scenario(index: MilvusIndex) -> tuple[list[str], int]:
        index.add([row("f1", sid, "slow first version")])
        first = asyncio.create_task(index.flush())
        await asyncio.sleep(0.1)
        index.add([row("f1", sid, "second version")])
        await index.flush()
        await first
        client = MilvusClient(uri=milvus_uri)
        found = client.query(f"{prefix}_current", filter='fact_id == "f1"', output_fields=["text"])
        client.close()
        return [r["text"] for r in found], index.pending

    texts, pending = run(index_of(milvus_uri, prefix, SlowFirstVersionEmbedder()), scenario)
    assert texts == ["second version"]
    assert pending == 0


def test_scipy_is_loaded_before_the_index_threads_can_race_to_load_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two of the index's threads loading it at once failed writes with
    # "partially initialized module 'scipy.sparse._bsr'".
    monkeypatch.setattr(SciPyHelper, "_checked", False)
    index_of("http://127.0.0.1:1", "unused")
    assert SciPyHelper._checked
