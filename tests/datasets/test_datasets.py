"""The labelled evaluation data in ``datasets/`` keeps its documented shape.

Fast and service-free: it reads the four JSONL files and the attribute
vocabulary and checks fields, types, id uniqueness, the closed sets of kinds and
decisions, the value conventions that can be checked mechanically, and the
coverage the README promises (every attribute, every kind in both splits).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
DATASETS = ROOT / "datasets"
VOCABULARY_PATH = Path(__file__).parents[2] / "processors" / "attributes.v1.json"
VOCABULARY = json.loads(VOCABULARY_PATH.read_text(encoding="utf-8"))["attributes"]

SPLITS = ("dev", "test")
PAIR_FILES = {split: DATASETS / f"slot_pairs.{split}.jsonl" for split in SPLITS}
TURN_FILES = {split: DATASETS / f"turns.{split}.jsonl" for split in SPLITS}

PAIR_KINDS = {
    "direct_change",
    "indirect_change",
    "timezone_via_city",
    "restatement",
    "more_detail",
    "related_different_slot",
    "correction",
    "negation",
    "hypothetical",
    "question",
    "third_party",
    "quote",
    "multi_valued_addition",
    "out_of_order",
    "repeat_verbatim",
    "high_stakes_change",
    "prompt_injection",
    "deletion_request",
    "deletion_ambiguous",
    "new_slot",
    "past_statement",
    "relative_date",
}
TURN_KINDS = {
    "messy_direct",
    "clean_direct",
    "indirect",
    "multi_fact",
    "negation",
    "third_party",
    "hypothetical",
    "question",
    "quote",
    "injection",
    "small_talk",
    "past",
    "relative_date",
    "deletion_request",
    "deletion_ambiguous",
}
DECISIONS = {"ADD", "UPDATE", "NOOP", "SUPERSEDE", "REVIEW", "none", "erase"}
SOURCES = {"chat", "profile", "billing"}
RELATIONSHIP_STATUSES = {
    "single",
    "in a relationship",
    "engaged",
    "married",
    "separated",
    "divorced",
    "widowed",
}

PAIR_FIELDS = {
    "id",
    "kind",
    "incumbent",
    "turn",
    "same_slot",
    "decision",
    "expected",
    "also",
    "note",
}
INCUMBENT_FIELDS = {"text", "attribute", "value", "observed_at", "source", "verification_count"}
TURN_FIELDS = {"id", "kind", "text", "observed_at", "speaker", "facts", "note"}

MIN_PAIRS, MIN_TURNS = 600, 400
MIN_PER_ATTRIBUTE, MIN_PER_ATTRIBUTE_PER_SPLIT = 5, 2
MIN_PER_PAIR_KIND = 15

ISO_WITH_ZONE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$")
ID_PATTERN = {"pairs": re.compile(r"^sp-\d{4}$"), "turns": re.compile(r"^tu-\d{4}$")}


def _load(path: Path) -> list[dict[str, Any]]:
    assert path.is_file(), f"{path} is missing"
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"{path.name}:{number} is blank"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            pytest.fail(f"{path.name}:{number} is not JSON: {exc}")
        assert isinstance(record, dict), f"{path.name}:{number} is not an object"
        record["_where"] = f"{path.name}:{number}"
        records.append(record)
    return records


@pytest.fixture(scope="module")
def pairs() -> dict[str, list[dict[str, Any]]]:
    return {split: _load(path) for split, path in PAIR_FILES.items()}


@pytest.fixture(scope="module")
def turns() -> dict[str, list[dict[str, Any]]]:
    return {split: _load(path) for split, path in TURN_FILES.items()}


def _all(by_split: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [record for split in SPLITS for record in by_split[split]]


def _fields(record: dict[str, Any]) -> set[str]:
    return set(record) - {"_where"}


def _is_str(value: Any) -> bool:
    return isinstance(value, str) and value.strip() == value and value != ""


def _opt_str(value: Any) -> bool:
    return value is None or _is_str(value)


def _timestamp(value: Any, where: str) -> None:
    assert isinstance(value, str) and ISO_WITH_ZONE.match(value), (
        f"{where}: bad timestamp {value!r}"
    )
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert parsed.tzinfo is not None, f"{where}: timestamp without a zone {value!r}"


def _fact(fact: Any, where: str, *, nullable: bool) -> None:
    assert isinstance(fact, dict) and set(fact) == {"attribute", "value"}, (
        f"{where}: bad fact {fact!r}"
    )
    if nullable:
        assert _opt_str(fact["attribute"]) and _opt_str(fact["value"]), f"{where}: {fact!r}"
        if fact["attribute"] is None:
            assert fact["value"] is None, f"{where}: free-text fact with a value {fact!r}"
    else:
        assert _is_str(fact["attribute"]) and _is_str(fact["value"]), f"{where}: {fact!r}"


def _erase(erase: Any, where: str, *, allow_fact: bool) -> None:
    assert isinstance(erase, dict) and len(erase) == 1, f"{where}: bad erase {erase!r}"
    ((key, value),) = erase.items()
    if key == "attribute":
        assert value in VOCABULARY, f"{where}: erase names unknown attribute {value!r}"
    elif key == "fact":
        assert allow_fact and value == "incumbent", f"{where}: bad erase {erase!r}"
    else:
        assert key == "subject" and value is True, f"{where}: bad erase {erase!r}"


def _values(record: dict[str, Any], kind: str) -> list[tuple[str | None, str | None]]:
    """Every (attribute, value) a record names, for the vocabulary and convention checks."""
    if kind == "turns":
        return [(f["attribute"], f["value"]) for f in record["facts"]]
    found = [(record["incumbent"]["attribute"], record["incumbent"]["value"])]
    if record["expected"] is not None:
        found.append((record["expected"]["attribute"], record["expected"]["value"]))
    found += [(f["attribute"], f["value"]) for f in record["also"]]
    return found


# --- shape ------------------------------------------------------------------------


def test_pair_lines_have_exactly_the_documented_fields(
    pairs: dict[str, list[dict[str, Any]]],
) -> None:
    for record in _all(pairs):
        where = record["_where"]
        wanted = PAIR_FIELDS | ({"erase"} if record.get("decision") == "erase" else set())
        assert _fields(record) == wanted, f"{where}: fields {sorted(_fields(record))}"
        assert _is_str(record["id"]) and _is_str(record["kind"]), where
        incumbent = record["incumbent"]
        assert isinstance(incumbent, dict) and set(incumbent) == INCUMBENT_FIELDS, where
        assert _is_str(incumbent["text"]), where
        assert _opt_str(incumbent["attribute"]) and _opt_str(incumbent["value"]), where
        assert (incumbent["attribute"] is None) == (incumbent["value"] is None), where
        _timestamp(incumbent["observed_at"], where)
        assert incumbent["source"] in SOURCES, f"{where}: source {incumbent['source']!r}"
        count = incumbent["verification_count"]
        assert type(count) is int and count >= 1, f"{where}: verification_count {count!r}"
        turn = record["turn"]
        assert isinstance(turn, dict) and set(turn) == {"text", "observed_at"}, where
        assert _is_str(turn["text"]), where
        _timestamp(turn["observed_at"], where)
        assert type(record["same_slot"]) is bool, where
        if record["expected"] is not None:
            _fact(record["expected"], where, nullable=True)
        assert isinstance(record["also"], list), where
        for fact in record["also"]:
            _fact(fact, where, nullable=False)
        assert isinstance(record["note"], str), where
        if "erase" in record:
            _erase(record["erase"], where, allow_fact=True)


def test_turn_lines_have_exactly_the_documented_fields(
    turns: dict[str, list[dict[str, Any]]],
) -> None:
    for record in _all(turns):
        where = record["_where"]
        wanted = TURN_FIELDS | ({"erase"} if record.get("kind") == "deletion_request" else set())
        assert _fields(record) == wanted, f"{where}: fields {sorted(_fields(record))}"
        assert _is_str(record["id"]) and _is_str(record["kind"]) and _is_str(record["text"]), where
        _timestamp(record["observed_at"], where)
        assert record["speaker"] == "user", where
        assert isinstance(record["facts"], list), where
        for fact in record["facts"]:
            _fact(fact, where, nullable=False)
        pairs_seen = [(f["attribute"], f["value"].lower()) for f in record["facts"]]
        assert len(pairs_seen) == len(set(pairs_seen)), f"{where}: a fact is listed twice"
        assert isinstance(record["note"], str), where
        if "erase" in record:
            _erase(record["erase"], where, allow_fact=False)
            assert record["facts"] == [], f"{where}: a deletion request lists facts"


def test_ids_are_unique_across_all_files(
    pairs: dict[str, list[dict[str, Any]]], turns: dict[str, list[dict[str, Any]]]
) -> None:
    ids: Counter[str] = Counter()
    for kind, by_split in (("pairs", pairs), ("turns", turns)):
        for record in _all(by_split):
            assert ID_PATTERN[kind].match(record["id"]), f"{record['_where']}: id {record['id']!r}"
            ids[record["id"]] += 1
    assert not [i for i, n in ids.items() if n > 1], "duplicate ids"


def test_turn_texts_are_never_reused(
    pairs: dict[str, list[dict[str, Any]]], turns: dict[str, list[dict[str, Any]]]
) -> None:
    texts = Counter(r["turn"]["text"].strip().lower() for r in _all(pairs))
    texts.update(r["text"].strip().lower() for r in _all(turns))
    assert not [t for t, n in texts.items() if n > 1], "a turn text appears twice"


def test_kinds_and_decisions_come_from_the_documented_sets(
    pairs: dict[str, list[dict[str, Any]]], turns: dict[str, list[dict[str, Any]]]
) -> None:
    for record in _all(pairs):
        assert record["kind"] in PAIR_KINDS, f"{record['_where']}: kind {record['kind']!r}"
        assert record["decision"] in DECISIONS, f"{record['_where']}: {record['decision']!r}"
    for record in _all(turns):
        assert record["kind"] in TURN_KINDS, f"{record['_where']}: kind {record['kind']!r}"


# --- labels -----------------------------------------------------------------------


def test_expected_is_null_exactly_for_none_and_erase(
    pairs: dict[str, list[dict[str, Any]]],
) -> None:
    for record in _all(pairs):
        silent = record["decision"] in {"none", "erase"}
        assert (record["expected"] is None) == silent, f"{record['_where']}: expected vs decision"
        if silent:
            assert record["also"] == [], f"{record['_where']}: a silent decision lists facts"


def test_same_slot_agrees_with_the_decision(pairs: dict[str, list[dict[str, Any]]]) -> None:
    for record in _all(pairs):
        where, decision = record["_where"], record["decision"]
        incumbent, expected = record["incumbent"]["attribute"], record["expected"]
        if decision in {"UPDATE", "NOOP", "SUPERSEDE", "REVIEW"}:
            assert record["same_slot"], f"{where}: {decision} must be in the incumbent's slot"
        if decision == "none":
            assert not record["same_slot"], f"{where}: no candidate, so no slot"
        if record["same_slot"] and expected is not None and incumbent is not None:
            assert expected["attribute"] == incumbent, f"{where}: same_slot across attributes"
        if decision == "ADD" and record["same_slot"] and incumbent is not None:
            many = VOCABULARY[incumbent]["cardinality"] == "many"
            assert many or record["kind"] == "out_of_order", f"{where}: ADD into a one-slot"
        if decision == "SUPERSEDE" and incumbent is not None:
            many = VOCABULARY[incumbent]["cardinality"] == "many"
            assert not many or record["kind"] == "correction", f"{where}: SUPERSEDE in a many-slot"
        if decision == "erase":
            assert record["kind"] == "deletion_request", f"{where}: erase outside deletion_request"


def test_every_attribute_used_is_in_the_vocabulary(
    pairs: dict[str, list[dict[str, Any]]], turns: dict[str, list[dict[str, Any]]]
) -> None:
    for kind, by_split in (("pairs", pairs), ("turns", turns)):
        for record in _all(by_split):
            for attribute, _ in _values(record, kind):
                assert attribute is None or attribute in VOCABULARY, (
                    f"{record['_where']}: unknown attribute {attribute!r}"
                )


def test_values_follow_the_conventions(
    pairs: dict[str, list[dict[str, Any]]], turns: dict[str, list[dict[str, Any]]]
) -> None:
    checks: dict[str, Callable[[str], object]] = {
        "email": lambda v: v == v.lower() and re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z.]+", v),
        "phone": lambda v: re.fullmatch(r"\+?\d{6,15}", v),
        "date_of_birth": lambda v: re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) and date.fromisoformat(v),
        "children_count": lambda v: v.isdigit(),
        "work_arrangement": lambda v: v in {"remote", "hybrid", "office"},
        "billing_cycle": lambda v: v in {"monthly", "annual"},
        "relationship_status": lambda v: v in RELATIONSHIP_STATUSES,
        "diet": lambda v: v == v.lower() and " " not in v,
        "job_title": lambda v: v == v.lower(),
        "hobbies": lambda v: v == v.lower(),
        "allergies": lambda v: v == v.lower(),
        "plan": lambda v: v[:1].isupper(),
        "pronouns": lambda v: v == v.lower(),
    }
    for kind, by_split in (("pairs", pairs), ("turns", turns)):
        for record in _all(by_split):
            for attribute, value in _values(record, kind):
                if attribute in checks and value is not None:
                    assert checks[attribute](value), f"{record['_where']}: {attribute}={value!r}"


# --- coverage ---------------------------------------------------------------------


def test_enough_pairs_and_turns(
    pairs: dict[str, list[dict[str, Any]]], turns: dict[str, list[dict[str, Any]]]
) -> None:
    assert len(_all(pairs)) >= MIN_PAIRS
    assert len(_all(turns)) >= MIN_TURNS


def test_every_kind_is_in_both_splits(
    pairs: dict[str, list[dict[str, Any]]], turns: dict[str, list[dict[str, Any]]]
) -> None:
    for split in SPLITS:
        assert {r["kind"] for r in pairs[split]} == PAIR_KINDS, f"pairs {split} misses a kind"
        assert {r["kind"] for r in turns[split]} == TURN_KINDS, f"turns {split} misses a kind"
    counts = Counter(r["kind"] for r in _all(pairs))
    thin = {k: n for k, n in counts.items() if n < MIN_PER_PAIR_KIND}
    assert not thin, f"pair kinds under {MIN_PER_PAIR_KIND}: {thin}"


def _pair_attributes(record: dict[str, Any]) -> set[str]:
    found = {record["incumbent"]["attribute"]}
    if record["expected"] is not None:
        found.add(record["expected"]["attribute"])
    return found - {None}


def test_every_vocabulary_attribute_is_covered_by_the_pairs(
    pairs: dict[str, list[dict[str, Any]]],
) -> None:
    total: Counter[str] = Counter()
    for split in SPLITS:
        per_split: Counter[str] = Counter()
        for record in pairs[split]:
            per_split.update(_pair_attributes(record))
        thin = {a: per_split[a] for a in VOCABULARY if per_split[a] < MIN_PER_ATTRIBUTE_PER_SPLIT}
        assert not thin, f"pairs {split}: attributes under {MIN_PER_ATTRIBUTE_PER_SPLIT}: {thin}"
        total += per_split
    thin = {a: total[a] for a in VOCABULARY if total[a] < MIN_PER_ATTRIBUTE}
    assert not thin, f"pairs: attributes under {MIN_PER_ATTRIBUTE}: {thin}"


def test_every_vocabulary_attribute_is_covered_by_the_turns(
    turns: dict[str, list[dict[str, Any]]],
) -> None:
    total = Counter(f["attribute"] for r in _all(turns) for f in r["facts"])
    thin = {a: total[a] for a in VOCABULARY if total[a] < MIN_PER_ATTRIBUTE}
    assert not thin, f"turns: attributes under {MIN_PER_ATTRIBUTE}: {thin}"


def test_a_single_valued_attribute_gets_one_value_per_turn(
    pairs: dict[str, list[dict[str, Any]]], turns: dict[str, list[dict[str, Any]]]
) -> None:
    for kind, by_split in (("pairs", pairs), ("turns", turns)):
        for record in _all(by_split):
            stated = _values(record, kind)[1:] if kind == "pairs" else _values(record, kind)
            ones = Counter(
                a for a, _ in stated if VOCABULARY.get(a or "", {}).get("cardinality") == "one"
            )
            twice = [a for a, n in ones.items() if n > 1]
            assert not twice, f"{record['_where']}: two values for {twice}"


def test_only_out_of_order_turns_arrive_before_their_incumbent(
    pairs: dict[str, list[dict[str, Any]]],
) -> None:
    def when(value: str) -> datetime:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))

    for record in _all(pairs):
        early = when(record["turn"]["observed_at"]) < when(record["incumbent"]["observed_at"])
        if early:
            assert record["kind"] == "out_of_order", f"{record['_where']}: turn before incumbent"
            assert record["decision"] == "ADD", f"{record['_where']}: a late arrival is history"


# --- deletion intent ----------------------------------------------------------------

DELETION_FILES = {split: DATASETS / f"deletion.{split}.jsonl" for split in SPLITS}
DELETION_KINDS = {"attribute", "topic", "fact", "everything", "lookalike"}
MIN_REQUESTS, MIN_LOOKALIKES = 80, 80


@pytest.fixture(scope="module")
def deletions() -> dict[str, list[dict[str, Any]]]:
    return {split: _load(path) for split, path in DELETION_FILES.items()}


def test_deletion_lines_have_the_documented_shape(
    deletions: dict[str, list[dict[str, Any]]],
) -> None:
    ids: Counter[str] = Counter()
    for record in _all(deletions):
        where = record["_where"]
        assert _fields(record) == {"id", "kind", "text", "observed_at", "erase", "note"}, where
        assert re.fullmatch(r"de-\d{4}", record["id"]), where
        ids[record["id"]] += 1
        assert record["kind"] in DELETION_KINDS, where
        assert _is_str(record["text"]) and isinstance(record["note"], str), where
        _timestamp(record["observed_at"], where)
        erase = record["erase"]
        if record["kind"] == "lookalike":
            assert erase is None, f"{where}: a look-alike asks for no erase"
            continue
        assert isinstance(erase, dict) and len(erase) == 1, f"{where}: bad erase {erase!r}"
        ((key, value),) = erase.items()
        if key == "attributes":
            assert value and all(a in VOCABULARY for a in value), f"{where}: {value!r}"
            assert len(set(value)) == len(value), where
        else:
            assert key in {"subject", "ask"} and value is True, f"{where}: bad erase {erase!r}"
            assert (key == "subject") == (record["kind"] == "everything"), where
    assert not [i for i, n in ids.items() if n > 1], "duplicate deletion ids"


def test_enough_deletion_requests_and_look_alikes_in_both_splits(
    deletions: dict[str, list[dict[str, Any]]],
) -> None:
    everything = _all(deletions)
    assert sum(r["kind"] != "lookalike" for r in everything) >= MIN_REQUESTS
    assert sum(r["kind"] == "lookalike" for r in everything) >= MIN_LOOKALIKES
    for split in SPLITS:
        assert {r["kind"] for r in deletions[split]} == DELETION_KINDS, split
    texts = Counter(r["text"].strip().lower() for r in everything)
    assert not [t for t, n in texts.items() if n > 1], "a deletion text appears twice"
