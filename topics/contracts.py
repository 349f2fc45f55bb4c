"""The published contracts: a JSON Schema for each public record, generated from the models.

The records of :mod:`slotwise.topics.records` are the wire contract (DESIGN
§2). Their JSON Schemas (draft 2020-12, field names as on the wire) are
generated from the pydantic models, shipped in the package
(``slotwise/topics/schemas/<name>.json``) and in ``docs/schemas/``, and served by
``GET /v1/schemas/{name}``; a producer or consumer in another language
validates against them. ``tests/topics/test_schemas.py`` checks that the
committed files equal what the models generate, so they cannot drift.

What a schema cannot say, the validator still checks: a timestamp must carry
a timezone, its year lie in 1000..9000, metadata nest at most 8 levels, a
``text`` stay under 64 KiB.

    python -m slotwise.topics.contracts          # check the committed files
    python -m slotwise.topics.contracts --write  # regenerate them
"""

from __future__ import annotations

import argparse
import sys
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from slotwise.topics.codec import loads
from slotwise.topics.records import (
    CandidateFact,
    Command,
    ErasureAttestation,
    Fact,
    Observation,
    ReviewItem,
    SupersessionEvent,
)

__all__ = ["MODELS", "generate", "load", "rendered"]

MODELS: dict[str, type[BaseModel]] = {
    "observation": Observation,
    "candidate": CandidateFact,
    "command": Command,
    "fact": Fact,
    "supersession": SupersessionEvent,
    "review": ReviewItem,
    "erasure": ErasureAttestation,
}
_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_REPO_DOCS = Path(__file__).resolve().parents[1] / "docs" / "schemas"


def generate(name: str) -> dict[str, Any]:
    """The JSON Schema of one record, as the model defines it."""
    model = MODELS[name]
    schema = model.model_json_schema(by_alias=True)
    version = model.model_fields["schema_"].default
    return {
        "$schema": _DIALECT,
        "$id": f"urn:slotwise:schema:{version}",
        **schema,
    }


def rendered(name: str) -> bytes:
    """The schema file's bytes: sorted keys, two-space indent, a final newline."""
    import json  # noqa: PLC0415 - only here: orjson cannot indent by two and sort at once

    text = json.dumps(generate(name), indent=2, sort_keys=True, ensure_ascii=False)
    return (text + "\n").encode()


@cache
def load(name: str) -> dict[str, Any]:
    """The shipped schema of one record (``KeyError`` for an unknown name)."""
    if name not in MODELS:
        raise KeyError(name)
    raw = resources.files("slotwise.topics").joinpath("schemas", f"{name}.json").read_bytes()
    schema: dict[str, Any] = loads(raw)
    return schema


def _targets() -> list[Path]:
    package = Path(__file__).resolve().parent / "schemas"
    return [package, _REPO_DOCS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m slotwise.topics.contracts")
    parser.add_argument("--write", action="store_true", help="regenerate the files")
    args = parser.parse_args(argv)
    stale = []
    for folder in _targets():
        for name in MODELS:
            path = folder / f"{name}.json"
            if args.write:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_bytes(rendered(name))
            elif not path.exists() or path.read_bytes() != rendered(name):
                stale.append(str(path))
    if stale:
        sys.stderr.write("stale schemas (run with --write): " + ", ".join(stale) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
