"""What each Milvus engine accepts, read from the version it reports."""

from __future__ import annotations

import pytest

from slotwise.sinks.milvus.engine import EngineTraits, hit_fact_id, read_category


@pytest.mark.parametrize(
    ("version", "engine", "nullable", "upsert"),
    [
        ("milvus_lite-3.2.2", "lite", True, True),
        # PyPI's standalone server (the `milvus` package) calls itself "-lite" too.
        ("v2.3.5-lite", "server", False, False),
        ("v2.4.15", "server", False, True),
        ("v2.5.4", "server", True, True),
        ("2.6.0", "server", True, True),
    ],
)
def test_the_reported_version_says_what_a_write_may_send(
    version: str, engine: str, nullable: bool, upsert: bool
) -> None:
    traits = EngineTraits.of_version(version)
    assert (traits.engine, traits.nullable_fields, traits.upsert_by_partition_key) == (
        engine,
        nullable,
        upsert,
    )


def test_an_empty_category_reads_as_none_and_a_hit_names_its_fact_either_way() -> None:
    assert read_category({"category": ""}) is None
    assert read_category({"category": None}) is None
    assert read_category({"category": "job"}) == "job"
    assert hit_fact_id({"fact_id": "f1", "distance": 0.5}) == "f1"
    assert hit_fact_id({"id": "f2", "distance": 0.5, "entity": {}}) == "f2"
