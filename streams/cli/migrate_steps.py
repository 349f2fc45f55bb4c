"""``slotwise migrate start | backfill | validate | switch | rollback | finish``.

The dual-index half of an embedding upgrade, after the adapter:

* ``start --to MODEL`` records the migration (``sinks/redis/migration.py``)
  and creates the new model's collection beside the one behind the alias.
  Running workers notice within ``SLOTWISE_MIGRATION_POLL_S`` and write every
  vector row to both from then on (``streams/migration/watch.py``).
* ``backfill`` re-embeds the old collection's rows into the new one, a batch
  at a time in fact-id order, resuming after the last batch recorded
  (``streams/migration/dual_index.py``); ``--rate`` caps its rows per second.
* ``validate`` runs shadow queries on both and exits 1 below ``--min-recall``.
* ``switch`` points the alias at the new collection (Milvus ``alter_alias``:
  a reader sees one collection or the other, never neither); ``rollback``
  points it back. Running processes keep the collection they resolved at
  start (and keep dual-writing): it is the rolling restart onto the new
  embedder that moves them, and a process on the old embedder is refused
  from then on unless a reverse adapter is enabled.
* ``finish`` stops the dual writes and drops the old collection once
  ``--grace`` has passed since the switch (re-run it then, or ``--now``).

Every step records what it did before saying so, and re-running one after a
crash does the same again: the steps converge.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Annotated, TypeVar

import typer
from pymilvus import MilvusClient

from slotwise.models.embedders import embedder_named
from slotwise.processors.ports import Embedder
from slotwise.sinks.milvus.collections import collection_model, collection_name, ensure_collection
from slotwise.sinks.redis.migration import Migration, MigrationStore
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.cli.durations import duration_days
from slotwise.streams.cli.migrate_io import milvus, out, progress, refusals
from slotwise.streams.config import Settings
from slotwise.streams.migration.adapter_fit import MigrationError, alias_collection
from slotwise.streams.migration.dual_index import backfill_batch, count, old_pages, shadow_queries
from slotwise.streams.read.embedder_choice import spec_for_stored

__all__ = ["backfill", "finish", "rollback", "show", "start", "switch", "validate"]

T = TypeVar("T")


def _with_store(settings: Settings, work: Callable[[MigrationStore], Awaitable[T]]) -> T:
    async def run() -> T:
        store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
        try:
            return await work(MigrationStore(store, settings.redis_prefix))
        finally:
            await store.close()

    return asyncio.run(run())


def _under_way(settings: Settings) -> Migration:
    migration = _with_store(settings, lambda m: m.get())
    if migration is None or migration.step == "finished":
        raise MigrationError("no migration under way: slotwise migrate start --to MODEL")
    return migration


def _embedder(spec: str, model: str) -> Embedder:
    embedder = embedder_named(spec)
    if embedder.model_name != model:
        raise MigrationError(f"{spec!r} embeds with {embedder.model_name}, not {model}")
    return embedder


def _now() -> datetime:
    return datetime.now(UTC)


def start(
    to: Annotated[
        str, typer.Option("--to", help="The new embedder, as SLOTWISE_EMBEDDER names it.")
    ],
    source: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="The old model's embedder setting (default SLOTWISE_EMBEDDER, else the "
            "built-in one the collection's stamp names).",
        ),
    ] = None,
) -> None:
    """Create the new model's collection and have every worker write both."""
    settings = Settings()
    client = milvus(settings)
    with refusals():
        old, old_model = alias_collection(client, settings.milvus_alias)
        new_embedder = embedder_named(to)
        if new_embedder.model_name == old_model:
            raise MigrationError(f"{old} is already {old_model}")
        from_spec = source or settings.embedder or spec_for_stored(old_model, settings.milvus_alias)
        _embedder(from_spec, old_model)  # the workers will need it to write the old collection
        planned = Migration(
            step="dual-writing",
            from_model=old_model,
            from_spec=from_spec,
            from_collection=old,
            to_model=new_embedder.model_name,
            to_spec=to,
            to_collection=collection_name(
                settings.milvus_collection_prefix, new_embedder.model_name, _now()
            ),
            started_at=Migration.at(_now()),
        )
        migration = _with_store(settings, lambda m: m.begin(planned))
        if migration.to_model != planned.to_model or migration.from_collection != old:
            raise MigrationError(
                f"a migration {migration.from_model} -> {migration.to_model} is under way "
                f"({migration.step}): finish it first"
            )
        # Recorded first, created second: a crash in between (or inside the creation,
        # before the index) is mended by re-running start.
        ensure_collection(
            client,
            migration.to_collection,
            model=migration.to_model,
            dimension=new_embedder.dimension,
            timeout_s=30,
        )
        client.load_collection(migration.to_collection)
    client.close()
    out.print(
        f"migrating {migration.from_collection} ({migration.from_model}) -> "
        f"{migration.to_collection} ({migration.to_model}); running workers write both within "
        f"{settings.migration_poll_s:g} s (SLOTWISE_MIGRATION_POLL_S), no restart needed"
    )
    out.print("next: slotwise migrate backfill")


def backfill(
    batch: Annotated[int, typer.Option("--batch", min=1, help="Rows per batch.")] = 256,
    rate: Annotated[
        float | None, typer.Option("--rate", min=0.1, help="At most this many rows a second.")
    ] = None,
    restart: Annotated[
        bool, typer.Option("--restart", help="From the first row again, not the cursor.")
    ] = False,
) -> None:
    """Re-embed the old collection's rows into the new one; resumable, idempotent."""
    settings = Settings()
    client = milvus(settings)
    with refusals():
        migration = _under_way(settings)
        embedder = _embedder(migration.to_spec, migration.to_model)
        # Every worker dual-writes by then, so a row the scan misses was written to both.
        ready = datetime.fromisoformat(migration.started_at) + timedelta(
            seconds=2 * settings.migration_poll_s
        )
        time.sleep(max(0.0, (ready - _now()).total_seconds()))
        total = count(client, migration.from_collection)

        async def run(migrations: MigrationStore) -> tuple[int, int]:
            cursor = "" if restart else migration.backfill_cursor
            done = 0 if restart else migration.backfilled
            began, copied = time.monotonic(), 0
            with progress() as bar:
                task = bar.add_task(
                    f"backfilling {migration.to_collection}", total=total, completed=done
                )
                for page in old_pages(client, migration.from_collection, cursor, batch):
                    copied += backfill_batch(
                        client, migration.from_collection, migration.to_collection, page, embedder
                    )
                    # Recorded after the batch is written: a kill re-writes at most this batch.
                    cursor = max(str(r["fact_id"]) for r in page)
                    done += len(page)
                    await migrations.update(
                        backfill_cursor=cursor, backfilled=done, backfill_done=False
                    )
                    bar.update(task, completed=min(done, total))
                    if rate is not None:
                        await asyncio.sleep(max(0.0, copied / rate - (time.monotonic() - began)))
            client.flush(migration.to_collection)
            await migrations.update(backfill_done=True)
            return copied, done

        copied, done = _with_store(settings, run)
    client.close()
    out.print(
        f"backfilled {migration.to_collection}: {copied} rows this run, {done} in all; "
        "next: slotwise migrate validate"
    )


def validate(
    sample: Annotated[int, typer.Option("--sample", min=10, help="Stored facts to query.")] = 500,
    min_recall: Annotated[
        float, typer.Option("--min-recall", min=0.0, max=1.0, help="Recall@10 to pass.")
    ] = 0.9,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Shadow queries, new collection against old; exit 1 below --min-recall or rows missing."""
    settings = Settings()
    client = milvus(settings)
    with refusals():
        migration = _under_way(settings)
        embedder = _embedder(migration.to_spec, migration.to_model)
        old_rows = count(client, migration.from_collection)
        new_rows = count(client, migration.to_collection)
        report = shadow_queries(
            client,
            migration.from_collection,
            migration.from_model,
            migration.to_collection,
            embedder,
            sample=sample,
            seed=seed,
        )
        passed = report.recall_at_10 >= min_recall and new_rows >= old_rows and report.queries > 0
        recorded = {
            **report.as_dict(),
            "old_rows": old_rows,
            "new_rows": new_rows,
            "min_recall": min_recall,
            "passed": passed,
        }
        _with_store(settings, lambda m: m.record_validation(recorded))
    client.close()
    out.print(
        f"{migration.to_collection} against {migration.from_collection} on {report.queries} "
        f"shadow queries: Recall@10 {report.recall_at_10:.3f}, NDCG@10 {report.ndcg_at_10:.3f}; "
        f"rows {new_rows} / {old_rows} ({'passed' if passed else 'failed'}, min {min_recall})"
    )
    if not passed:
        raise typer.Exit(1)


def _point(client: MilvusClient, settings: Settings, collection: str) -> None:
    client.load_collection(collection)
    current = str(client.describe_alias(settings.milvus_alias)["collection_name"])
    if current != collection:
        client.alter_alias(collection, settings.milvus_alias)


def switch(
    force: Annotated[bool, typer.Option("--force", help="Without a passed validate.")] = False,
) -> None:
    """Point the alias at the new collection, atomically for readers."""
    settings = Settings()
    client = milvus(settings)
    with refusals():
        migration = _under_way(settings)
        if not migration.backfill_done and not force:
            raise MigrationError("the backfill has not finished: slotwise migrate backfill")
        if not migration.validated and not force:
            raise MigrationError("no passed validation: slotwise migrate validate (or --force)")
        client.flush(migration.to_collection)  # searched by every reader from the swap on
        _point(client, settings, migration.to_collection)
        _with_store(settings, lambda m: m.update(step="switched", switched_at=Migration.at(_now())))
    client.close()
    out.print(
        f"{settings.milvus_alias} -> {migration.to_collection}. Running processes keep the "
        "collection they opened (and keep writing both); restart the workers on "
        f"{migration.to_spec} now: a process started on {migration.from_model} is refused"
    )


def rollback() -> None:
    """Point the alias back at the old collection (still complete: the workers write both)."""
    settings = Settings()
    client = milvus(settings)
    with refusals():
        migration = _under_way(settings)
        _point(client, settings, migration.from_collection)
        _with_store(
            settings, lambda m: m.update(step="rolled-back", rolled_back_at=Migration.at(_now()))
        )
    client.close()
    out.print(
        f"{settings.milvus_alias} -> {migration.from_collection} again; restart the workers on "
        f"{migration.from_spec}. Dual writes go on until finish."
    )


def finish(
    grace: Annotated[
        float,
        typer.Option(
            "--grace",
            parser=duration_days,
            metavar="DURATION",
            help="How long after the switch to keep the old collection (7d).",
        ),
    ] = 7.0,
    now: Annotated[bool, typer.Option("--now", help="Drop the old collection today.")] = False,
) -> None:
    """Stop the dual writes; drop the old collection once the grace period is over."""
    settings = Settings()
    client = milvus(settings)
    with refusals():
        migration = _with_store(settings, lambda m: m.get())
        if migration is None or migration.step not in {"switched", "finished"}:
            raise MigrationError("finish follows switch: slotwise migrate switch")
        alias = str(client.describe_alias(settings.milvus_alias)["collection_name"])
        if alias != migration.to_collection:
            raise MigrationError(
                f"{settings.milvus_alias} points at {alias}, not the new collection"
            )
        if migration.step != "finished":
            _with_store(
                settings, lambda m: m.update(step="finished", finished_at=Migration.at(_now()))
            )
        due = datetime.fromisoformat(migration.switched_at) + timedelta(days=grace)
        dropped = client.has_collection(migration.from_collection) and (now or _now() >= due)
        if dropped:
            client.drop_collection(migration.from_collection)
    client.close()
    out.print("dual writes stop within the poll interval")
    if dropped:
        out.print(f"dropped {migration.from_collection}")
    else:
        out.print(
            f"{migration.from_collection} kept until {due:%Y-%m-%d %H:%M} UTC: finish again then"
        )


def show(client: MilvusClient, settings: Settings) -> None:
    """``migrate status``'s lines about the migration."""
    migration = _with_store(settings, lambda m: m.get())
    if migration is None:
        out.print("migration: none")
        return
    out.print(f"migration: {migration.from_model} -> {migration.to_model}, {migration.step}")
    for name in (migration.from_collection, migration.to_collection):
        if client.has_collection(name):
            out.print(
                f"  {count(client, name):>9,} rows  {name} ({collection_model(client, name)})"
            )
        else:
            out.print(f"  dropped  {name}")
    state = "done" if migration.backfill_done else f"after {migration.backfill_cursor or '(start)'}"
    out.print(f"  backfill: {migration.backfilled:,} rows written, {state}")
    for label, moment in (
        ("started", migration.started_at),
        ("switched", migration.switched_at),
        ("rolled back", migration.rolled_back_at),
        ("finished", migration.finished_at),
    ):
        if moment:
            out.print(f"  {label} {moment}")
    if migration.validation:
        out.print(f"  validation {migration.validation}")
