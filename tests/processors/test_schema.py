"""The shipped attribute vocabulary (attributes.v1.json) and its loader."""

from __future__ import annotations

import json
from collections import defaultdict
from importlib import resources
from pathlib import Path

import pytest

from slotwise.processors.schema import AttributeSchema, SchemaError

SCHEMA = AttributeSchema.load()

# The public API: names other code and clients key on, with their cardinality and stakes.
REQUIRED = {
    "name": ("one", "high"),
    "email": ("one", "high"),
    "phone": ("one", "high"),
    "home_city": ("one", None),
    "home_country": ("one", None),
    "employer": ("one", None),
    "job_title": ("one", None),
    "plan": ("one", None),
    "diet": ("one", None),
    "allergies": ("many", "high"),
    "languages": ("many", None),
    "pets": ("many", None),
    "children_count": ("one", None),
    "relationship_status": ("one", None),
    "timezone": ("one", None),
    "preferred_name": ("one", None),
    "database": ("one", None),
}
HIGH_STAKES_CATEGORIES = {"identity", "contact", "health"}


def test_required_attributes_are_present_with_their_cardinality_and_stakes() -> None:
    for name, (cardinality, stakes) in REQUIRED.items():
        spec = SCHEMA.get(name)
        assert spec is not None, name
        assert spec.cardinality == cardinality, name
        if stakes is not None:
            assert spec.stakes == stakes, name


def test_about_thirty_attributes_version_one() -> None:
    assert SCHEMA.version == "1"
    assert 28 <= len(SCHEMA) <= 40


def test_every_entry_is_complete_and_valid() -> None:
    document = json.loads(
        resources.files("slotwise.processors").joinpath("attributes.v1.json").read_text("utf-8")
    )
    for name, entry in document["attributes"].items():
        assert set(entry) == {"cardinality", "category", "half_life_days", "stakes", "description"}
        assert name.isidentifier() and name == name.lower()
        assert entry["cardinality"] in ("one", "many")
        assert entry["stakes"] in ("high", "normal")
        assert entry["description"].strip()
        half_life = entry["half_life_days"]
        assert half_life is None or (isinstance(half_life, int | float) and half_life > 0)


def test_a_category_has_one_half_life() -> None:
    # Forgetting reads half_life[category]: attributes sharing a category must agree.
    by_category: dict[str, set[float | None]] = defaultdict(set)
    for spec in SCHEMA:
        by_category[spec.category].add(spec.half_life_days)
    assert all(len(half_lives) == 1 for half_lives in by_category.values()), by_category


def test_half_lives_by_category() -> None:
    half_life = {spec.category: spec.half_life_days for spec in SCHEMA}
    assert half_life["identity"] is None
    assert half_life["event"] == 30
    assert half_life["plan"] == 365
    assert half_life["work"] == 730
    contact, preferences = half_life["contact"], half_life["preferences"]
    assert contact is not None and contact >= 365
    assert preferences is not None and preferences >= 2 * 365


def test_medical_identity_and_contact_attributes_are_high_stakes() -> None:
    for spec in SCHEMA:
        if spec.category in HIGH_STAKES_CATEGORIES:
            assert spec.high_stakes, spec.name
    assert SCHEMA.attributes["payment_method"].high_stakes


def test_the_loader_rejects_a_malformed_file(tmp_path: Path) -> None:
    bad = tmp_path / "attributes.json"
    bad.write_text(json.dumps({"attributes": {"x": {"cardinality": "few", "category": "c"}}}))
    with pytest.raises(SchemaError):
        AttributeSchema.load(bad)
