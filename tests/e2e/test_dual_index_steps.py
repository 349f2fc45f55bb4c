"""A whole migration, every step killed with SIGKILL inside it and re-run, ends as an
uninterrupted one.

Two fresh deployments get the same facts on MiniLM and the same migration, to
MiniLM's folder under another name, through the real CLI, one process a
step: ``start``, ``backfill``, ``validate``, ``switch``, ``rollback``,
``switch``, ``finish --now``. On one deployment every step runs to its end. On
the other each step first runs under a :class:`~tests.e2e.killpoint.KillPoint`
(the process SIGKILLs itself at a chosen call inside the step: exit -9, or the
test fails) and is then run again to its end; ``start`` is killed twice, once
after its record is written and before the collection exists, once inside the
creation of the collection (created, its index not yet). Then both
deployments must hold the same migration record (its fields but the
timestamps, which are only set or not), the alias on the new model's
collection, that collection alone, and in it the same fact ids, texts and
stamps, the vectors equal within float tolerance.

The two deployments run side by side (a thread each): a step's process costs
2 to 5 s of imports, which is most of the run time (``SLOTWISE_TEST_MIGRATION_FACTS``,
200 facts, changes little of it).
"""

from __future__ import annotations

import asyncio
import math
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from pymilvus import MilvusClient

from slotwise.sinks.milvus.collections import collection_model
from slotwise.streams.config import Settings
from tests.e2e.killpoint import KillPoint
from tests.e2e.migration import (
    DeploymentFactory,
    collection_rows,
    migrate,
    recorded,
    renamed_minilm,
    seed,
    seed_rows,
)

pytestmark = [pytest.mark.redis, pytest.mark.milvus]

FACTS = int(os.environ.get("SLOTWISE_TEST_MIGRATION_FACTS", "200"))
BATCH = 16
STORE = "slotwise.sinks.redis.migration:MigrationStore"
CLIENT = "pymilvus:MilvusClient"
TIMESTAMPS = ("started_at", "switched_at", "rolled_back_at", "finished_at")

Step = tuple[tuple[str, ...], tuple[KillPoint, ...]]


def _steps(new_model: str) -> list[Step]:
    """Each step's arguments and where its interrupted runs are killed, in turn."""
    return [
        (
            ("start", "--to", new_model),
            (
                KillPoint(f"{STORE}.begin"),  # recorded, the collection not created
                KillPoint(f"{CLIENT}.create_index", "before"),  # created, not indexed
            ),
        ),
        # The fourth batch written, its cursor not recorded (the third's is).
        (("backfill", "--batch", str(BATCH)), (KillPoint(f"{STORE}.update", "before", 4),)),
        # Shadow queries run, their report not recorded.
        (("validate", "--sample", "60"), (KillPoint(f"{STORE}.record_validation", "before"),)),
        # The alias moved, the step not recorded.
        (("switch",), (KillPoint(f"{CLIENT}.alter_alias"),)),
        (("rollback",), (KillPoint(f"{CLIENT}.alter_alias"),)),
        (("switch",), (KillPoint(f"{CLIENT}.alter_alias"),)),
        # Recorded finished, the old collection not dropped.
        (("finish", "--now"), (KillPoint(f"{STORE}.update"),)),
    ]


def _migrate(settings: Settings, steps: list[Step], *, interrupted: bool) -> None:
    for args, kills in steps:
        for kill in kills if interrupted else ():
            killed = migrate(settings, *args, kill=kill)
            assert killed.returncode == -9, (
                f"{args} did not reach {kill}: {killed.returncode}\n{killed.stdout}{killed.stderr}"
            )
        done = migrate(settings, *args)
        assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"


def _end_state(settings: Settings) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The migration record, alias and collections (named without the deployment's
    prefix, by model), and the rows of the collection behind the alias."""
    migration = asyncio.run(recorded(settings))
    prefix = f"{settings.milvus_collection_prefix}_"
    record = {
        name: (bool(value) if name in TIMESTAMPS else value)
        for name, value in vars(migration).items()
    }
    record["from_collection"] = migration.from_collection.removeprefix(prefix)
    record["to_collection"] = migration.to_collection.removeprefix(prefix)
    record["validation"] = orjson.loads(migration.validation) if migration.validation else None
    client = MilvusClient(uri=settings.milvus_uri)
    try:
        behind = str(client.describe_alias(settings.milvus_alias)["collection_name"])
        collections = {
            name.removeprefix(prefix): collection_model(client, name)
            for name in client.list_collections()
            if name.startswith(prefix)
        }
    finally:
        client.close()
    state = {
        "record": record,
        "alias": (behind.removeprefix(prefix), collections.get(behind.removeprefix(prefix))),
        "collections": collections,
    }
    return state, collection_rows(settings, behind)


def _same_report(got: dict[str, Any], expected: dict[str, Any]) -> bool:
    return got.keys() == expected.keys() and all(
        math.isclose(v, expected[k], abs_tol=1e-6) if isinstance(v, float) else v == expected[k]
        for k, v in got.items()
    )


def test_a_migration_killed_inside_every_step_and_rerun_ends_as_an_uninterrupted_one(
    deployment_factory: DeploymentFactory, tmp_path: Path
) -> None:
    new_model = renamed_minilm(tmp_path / "all-MiniLM-L6-v2-renamed")
    steps = _steps(new_model)
    clean, crashed = deployment_factory(), deployment_factory()
    for settings in (clean, crashed):
        asyncio.run(seed(settings, seed_rows(FACTS)))

    with ThreadPoolExecutor(max_workers=1) as pool:
        uninterrupted = pool.submit(_migrate, clean, steps, interrupted=False)
        _migrate(crashed, steps, interrupted=True)
        uninterrupted.result()

    (expected, expected_rows), (got, got_rows) = _end_state(clean), _end_state(crashed)
    report, expected_report = got["record"].pop("validation"), expected["record"].pop("validation")
    assert expected_report["passed"] and _same_report(report, expected_report), (
        report,
        expected_report,
    )
    assert got == expected
    assert expected["record"]["step"] == "finished" and expected["record"]["backfill_done"]
    assert expected["record"]["backfilled"] == FACTS
    assert expected["alias"][1] == "all-MiniLM-L6-v2-renamed"
    assert list(expected["collections"].values()) == ["all-MiniLM-L6-v2-renamed"]

    assert sorted(got_rows) == sorted(expected_rows) == [r.fact_id for r in seed_rows(FACTS)]
    ids = sorted(expected_rows)
    for field in ("text", "embedding_model"):
        assert [got_rows[i][field] for i in ids] == [expected_rows[i][field] for i in ids]
    assert np.allclose(
        np.asarray([got_rows[i]["vector"] for i in ids], dtype=np.float32),
        np.asarray([expected_rows[i]["vector"] for i in ids], dtype=np.float32),
        atol=1e-5,
    )
