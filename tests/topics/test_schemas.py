"""The published JSON Schemas: what the models generate, and they hold the docs' examples."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest

from slotwise.topics.codec import decode_record, loads
from slotwise.topics.contracts import MODELS, load, main, rendered

_REPO = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"```json\n(.*?)```", re.DOTALL)
_NAME = {f"{name}/1": name for name in MODELS}


def validator(name: str) -> jsonschema.protocols.Validator:
    schema = load(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", list(MODELS))
def test_the_committed_schemas_are_what_the_models_generate(name: str) -> None:
    expected = rendered(name)
    assert (_REPO / "topics" / "schemas" / f"{name}.json").read_bytes() == expected
    assert (_REPO / "docs" / "schemas" / f"{name}.json").read_bytes() == expected
    assert main([]) == 0


def _examples() -> list[tuple[str, str]]:
    found = []
    for path in [_REPO / "README.md", *sorted((_REPO / "docs").glob("*.md"))]:
        for block in _BLOCK.findall(path.read_text()):
            body = loads(block)
            if isinstance(body, dict) and body.get("schema") in _NAME:
                found.append((f"{path.name}:{body['schema']}", block))
    return found


def test_every_record_kind_has_an_example_in_the_docs() -> None:
    kinds = {label.split(":", 1)[1] for label, _ in _examples()}
    assert kinds == set(_NAME)


@pytest.mark.parametrize(("label", "block"), _examples(), ids=[e[0] for e in _examples()])
def test_every_example_in_the_docs_validates(label: str, block: str) -> None:
    body = loads(block)
    validator(_NAME[body["schema"]]).validate(body)
    decode_record(block.encode())  # and the records agree


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"subject_id": "   "}, "blank"),
        ({"subject_id": "a\x00b"}, "control character"),
        ({"subject_id": "x" * 257}, "too long"),
        ({"observed_at": 1773482400}, "a number, not a string"),
        ({"schema": "observation/2"}, "another version"),
        ({"text": None}, "text is required"),
    ],
)
def test_the_schema_refuses_what_the_records_refuse(change: dict[str, object], why: str) -> None:
    body = {
        "schema": "observation/1",
        "observation_id": "o-1",
        "subject_id": "user-42",
        "text": "hello",
        "observed_at": "2026-03-14T10:00:00Z",
        **change,
    }
    assert not validator("observation").is_valid(body), why


def test_the_id_pattern_refuses_exactly_what_the_records_refuse() -> None:
    """Over every code point: JSON Schema's ECMA-262 regexes and Python's agree on blanks."""
    pattern = re.compile(load("observation")["properties"]["subject_id"]["pattern"])
    control = re.compile(r"[\x00-\x1f\x7f]")
    for point in range(0x110000):
        char = chr(point)
        accepted = bool(char.strip()) and not control.search(char)
        assert bool(pattern.match(char)) is accepted, hex(point)
