"""The attribute vocabulary: which slots the exact path can key, and how each behaves.

The vocabulary is a versioned data file (``attributes.v1.json`` beside this
module). Each attribute declares its cardinality (``one``: a new value
supersedes; ``many``: a new value adds), its category, its half-life for
forgetting (null: never decays) and its stakes (``high``: contradicting a
corroborated belief goes to review).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from slotwise.topics.exceptions import SlotwiseError

__all__ = ["AttributeSchema", "AttributeSpec", "SchemaError"]

DEFAULT_SCHEMA = "attributes.v1.json"


class SchemaError(SlotwiseError, ValueError):
    """The vocabulary file is malformed."""


@dataclass(frozen=True, slots=True)
class AttributeSpec:
    name: str
    cardinality: Literal["one", "many"]
    category: str
    half_life_days: float | None
    stakes: Literal["high", "normal"]
    description: str

    @property
    def single_valued(self) -> bool:
        return self.cardinality == "one"

    @property
    def high_stakes(self) -> bool:
        return self.stakes == "high"


@dataclass(frozen=True, slots=True)
class AttributeSchema:
    version: str
    attributes: dict[str, AttributeSpec]

    @classmethod
    def load(cls, path: Path | None = None) -> AttributeSchema:
        if path is None:
            text = (
                resources.files("slotwise.processors").joinpath(DEFAULT_SCHEMA).read_text("utf-8")
            )
        else:
            text = path.read_text("utf-8")
        return cls.parse(json.loads(text))

    @classmethod
    def parse(cls, document: object) -> AttributeSchema:
        if not isinstance(document, dict) or not isinstance(document.get("attributes"), dict):
            raise SchemaError("schema must be an object with an 'attributes' object")
        specs: dict[str, AttributeSpec] = {}
        for name, entry in document["attributes"].items():
            try:
                specs[name] = AttributeSpec(
                    name=name,
                    cardinality=_choice(entry["cardinality"], ("one", "many")),  # type: ignore[arg-type]
                    category=str(entry["category"]),
                    half_life_days=(
                        None if entry["half_life_days"] is None else float(entry["half_life_days"])
                    ),
                    stakes=_choice(entry.get("stakes", "normal"), ("high", "normal")),  # type: ignore[arg-type]
                    description=str(entry.get("description", "")),
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise SchemaError(f"attribute {name!r}: {exc}") from None
        return cls(version=str(document.get("version", "1")), attributes=specs)

    def get(self, name: str | None) -> AttributeSpec | None:
        return None if name is None else self.attributes.get(name)

    def __iter__(self) -> Iterator[AttributeSpec]:
        return iter(self.attributes.values())

    def __len__(self) -> int:
        return len(self.attributes)


def _choice(value: object, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{value!r} is not one of {allowed}")
    return str(value)
