"""``slotwise migrate status`` and ``migrate adapter fit | validate | enable | disable``.

The dual-index steps (``start``, ``backfill``, ...) are ``streams/cli/migrate_steps.py``.

The query-time bridge of an embedding upgrade (the design, Drift-Adapter):

* ``adapter fit --kind procrustes|affine`` samples stored facts of the
  collection behind the alias, embeds their texts with this process's
  embedder (``SLOTWISE_EMBEDDER``: the new model), fits a map into the
  collection's space on most of them and keeps the rest out for validation;
  the adapter is stored in Redis by version (``sinks/redis/adapters.py``).
* ``adapter validate VERSION`` scores it on the held-out facts (Recall@10 and
  NDCG@10 against the old model's own neighbours) and exits 1 below
  ``--min-recall``; the result is recorded.
* ``adapter enable VERSION`` re-checks every row's stamp and requires a
  passed validation; workers and ``serve`` started with the new embedder then
  search the old collection through it (``streams/read/vector_space.py``), on
  their next start. ``adapter disable`` takes it away.
* ``status`` shows the alias, its collection's model, every row's stamp
  counted, and the adapters.

Exit codes: 0 done, 1 refused or below the threshold (the message says why).
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from pymilvus import MilvusClient

from slotwise.models.embedders import DEFAULT_EMBEDDER, embedder_named
from slotwise.processors.drift_adapter import KINDS, AdapterKind, DriftAdapter, fit_adapter
from slotwise.processors.ports import Embedder
from slotwise.sinks.redis.adapters import AdapterStore
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.cli import migrate_steps as cli_dual_index
from slotwise.streams.cli.migrate_io import milvus as _milvus
from slotwise.streams.cli.migrate_io import out as _out
from slotwise.streams.cli.migrate_io import progress as _progress
from slotwise.streams.cli.migrate_io import refusals as _refusals
from slotwise.streams.config import Settings
from slotwise.streams.migration.adapter_fit import (
    Census,
    MigrationError,
    census,
    embed_all,
    judge,
    sample_pairs,
    stored_pairs,
)

__all__ = ["migrate_app"]

migrate_app = typer.Typer(name="migrate", help="Embedding-model upgrades without downtime.")
adapter_app = typer.Typer(
    name="adapter", help="The query-time adapter: new-model queries, old index."
)
migrate_app.add_typer(adapter_app, name="adapter")
for _step in (
    cli_dual_index.start,
    cli_dual_index.backfill,
    cli_dual_index.validate,
    cli_dual_index.switch,
    cli_dual_index.rollback,
    cli_dual_index.finish,
):
    migrate_app.command(_step.__name__)(_step)


def _adapters(settings: Settings) -> tuple[RedisStore, AdapterStore]:
    store = RedisStore.from_url(settings.redis_url, prefix=settings.redis_prefix)
    return store, AdapterStore(store, settings.redis_prefix)


def _counted(client: MilvusClient, settings: Settings) -> Census:
    with _progress() as progress:
        task = progress.add_task("reading every row's stamp", total=None)
        return census(client, settings.milvus_alias, lambda n: progress.advance(task, n))


def _new_embedder(settings: Settings, target: str) -> Embedder:
    embedder = embedder_named(settings.embedder or DEFAULT_EMBEDDER)
    if embedder.model_name == target:
        raise MigrationError(
            f"the collection is already {target}: set SLOTWISE_EMBEDDER to the new model"
        )
    return embedder


@adapter_app.command("fit")
def fit(
    kind: Annotated[str, typer.Option("--kind", help=f"One of {', '.join(KINDS)}.")] = "procrustes",
    sample: Annotated[int, typer.Option("--sample", min=20, help="Stored facts to pair.")] = 4000,
    held_out: Annotated[
        float, typer.Option("--held-out", min=0.05, max=0.5, help="Share kept for validate.")
    ] = 0.2,
    rank: Annotated[int | None, typer.Option("--rank", help="Affine rank (default full).")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Fit an adapter from this embedder's space into the alias collection's."""
    if kind not in KINDS:
        raise typer.BadParameter(f"one of {', '.join(KINDS)}", param_hint="--kind")
    settings = Settings()
    client = _milvus(settings)
    with _refusals():
        counted = _counted(client, settings)
        counted.require_uniform()
        embedder = _new_embedder(settings, counted.model)
        with _progress() as progress:
            task = progress.add_task(f"sampling {counted.collection}", total=counted.rows)
            pairs = sample_pairs(
                client,
                counted.collection,
                counted.model,
                sample,
                seed=seed,
                tick=lambda n: progress.advance(task, n),
            )
            train, kept = pairs.split(held_out, seed)
            task = progress.add_task(
                f"embedding with {embedder.model_name}", total=len(train.texts)
            )
            new = embed_all(embedder, train.texts, lambda n: progress.advance(task, n))
        adapter_kind: AdapterKind = "procrustes" if kind == "procrustes" else "affine"
        adapter = fit_adapter(
            adapter_kind,
            new,
            train.old,
            source_model=embedder.model_name,
            target_model=counted.model,
            rank=rank,
        )

        async def save() -> str:
            store, adapters = _adapters(settings)
            try:
                return await adapters.save(adapter, held_out=kept.fact_ids)
            finally:
                await store.close()

        version = asyncio.run(save())
    client.close()
    _out.print(
        f"fitted {adapter.stamp} on {len(train.fact_ids)} pairs; {len(kept.fact_ids)} held out"
    )
    _out.print(f"next: slotwise migrate adapter validate {version}")


@adapter_app.command("validate")
def validate(
    version: Annotated[str, typer.Argument(help="The adapter's version (from fit).")],
    min_recall: Annotated[
        float, typer.Option("--min-recall", min=0.0, max=1.0, help="Recall@10 to pass.")
    ] = 0.9,
) -> None:
    """Shadow queries on the held-out facts: Recall@10 / NDCG@10; exit 1 below --min-recall."""
    settings = Settings()
    client = _milvus(settings)

    async def held() -> tuple[DriftAdapter, list[str]]:
        store, adapters = _adapters(settings)
        try:
            return await adapters.load(version), await adapters.held_out(version)
        finally:
            await store.close()

    with _refusals():
        adapter, ids = asyncio.run(held())
        counted = _counted(client, settings)
        if adapter.target_model != counted.model:
            raise MigrationError(
                f"{adapter.stamp} maps into {adapter.target_model}; "
                f"{counted.collection} is {counted.model}"
            )
        pairs = stored_pairs(client, counted.collection, counted.model, ids)
        embedder = embedder_named(settings.embedder or DEFAULT_EMBEDDER)
        if embedder.model_name != adapter.source_model:
            raise MigrationError(
                f"{adapter.stamp} maps {adapter.source_model} queries; SLOTWISE_EMBEDDER "
                f"gives {embedder.model_name}"
            )
        with _progress() as progress:
            task = progress.add_task("shadow queries", total=len(pairs.texts))
            new = embed_all(embedder, pairs.texts, lambda n: progress.advance(task, n))
        report = judge(adapter, new, pairs.old)
        passed = report["recall_at_10"] >= min_recall

        async def record() -> None:
            store, adapters = _adapters(settings)
            try:
                await adapters.record_validation(
                    version, {**report, "min_recall": min_recall, "passed": passed}
                )
            finally:
                await store.close()

        asyncio.run(record())
    client.close()
    _out.print(
        f"{adapter.stamp} on {report['held_out']:.0f} held-out facts: "
        f"Recall@10 {report['recall_at_10']:.3f}, NDCG@10 {report['ndcg_at_10']:.3f}, "
        f"mean cosine to the stored vector {report['mean_cosine']:.3f} "
        f"({'passed' if passed else 'below'} {min_recall})"
    )
    if not passed:
        raise typer.Exit(1)


@adapter_app.command("enable")
def enable(
    version: Annotated[str, typer.Argument(help="The adapter's version.")],
    force: Annotated[
        bool, typer.Option("--force", help="Enable without a passed validation.")
    ] = False,
) -> None:
    """Search the alias collection through this adapter (workers pick it up as they restart)."""
    settings = Settings()
    client = _milvus(settings)
    with _refusals():
        # Every row, not a sample: the rows the adapter does not expect are the silent loss.
        counted = _counted(client, settings)
        counted.require_uniform()

        async def run() -> DriftAdapter:
            store, adapters = _adapters(settings)
            try:
                adapter = await adapters.load(version)
                if adapter.target_model != counted.model:
                    raise MigrationError(
                        f"{adapter.stamp} maps into {adapter.target_model}; "
                        f"{counted.collection} is {counted.model}"
                    )
                report = await adapters.validation(version)
                if not force and not (report and report.get("passed")):
                    raise MigrationError(
                        f"{version} has no passed validation: slotwise migrate adapter "
                        f"validate {version} (or --force)"
                    )
                return await adapters.enable(version)
            finally:
                await store.close()

        adapter = asyncio.run(run())
    client.close()
    _out.print(
        f"enabled {adapter.stamp}: start workers with the {adapter.source_model} embedder "
        f"and they search {counted.collection} ({counted.rows} rows) through it"
    )


@adapter_app.command("disable")
def disable() -> None:
    """Stop bridging: processes started from now on search only their own model's space."""
    settings = Settings()

    async def run() -> str | None:
        store, adapters = _adapters(settings)
        try:
            return await adapters.disable()
        finally:
            await store.close()

    with _refusals():
        was = asyncio.run(run())
    _out.print(f"disabled {was}" if was else "no adapter was enabled")


@migrate_app.command("status")
def status() -> None:
    """The alias, its collection's model, every row's stamp, the adapter, the migration."""
    settings = Settings()
    client = _milvus(settings)
    with _refusals():
        counted = _counted(client, settings)

        async def run() -> tuple[DriftAdapter | None, dict[str, object] | None]:
            store, adapters = _adapters(settings)
            try:
                adapter = await adapters.enabled()
                report = await adapters.validation(adapter.version) if adapter else None
                return adapter, report
            finally:
                await store.close()

        adapter, report = asyncio.run(run())
    _out.print(f"{settings.milvus_alias} -> {counted.collection} ({counted.model})")
    for stamp, rows in sorted(counted.stamps.items()):
        mark = "" if stamp == counted.model or stamp not in counted.foreign() else "  (foreign)"
        _out.print(f"  {rows:>9,} rows  {stamp}{mark}")
    if adapter is None:
        _out.print("adapter: none enabled")
    else:
        _out.print(f"adapter: {adapter.stamp} enabled; validation {report or 'none'}")
    with _refusals():
        cli_dual_index.show(client, settings)
    client.close()
